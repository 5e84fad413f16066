// An answer of 202 instead of the operation's usual status: the change is recorded and will be
// carried out later (an account's node that does not answer now, docs/nodes.md "What the API
// promises"). A service returns accepted(body); withApiKey sends the body with 202.

const ACCEPTED = Symbol("accepted");

export interface Accepted<Body> {
  [ACCEPTED]: true;
  body: Body;
}

export const accepted = <Body>(body: Body): Accepted<Body> => ({ [ACCEPTED]: true, body });

export const isAccepted = (value: unknown): value is Accepted<unknown> => typeof value === "object" && value !== null && ACCEPTED in value;

/** The body, whether it was accepted for later or done now (the admin UI and the command line show either). */
export const bodyOf = <Body>(outcome: Body | Accepted<Body>): Body => (isAccepted(outcome) ? (outcome.body as Body) : outcome);
