import { defineOperation, idParams } from "@/lib/http/operation";
import { drainNodeSchema, drainSchema, moveAnswerSchema, startMoveSchema } from "./schemas";

const tag = "Moves";

export const moveOperations = {
  start: defineOperation({
    operationId: "moveAccount",
    method: "POST",
    path: "/api/admin/accounts/{id}/move",
    audience: "admin",
    tag,
    summary: "Move the account to another node; its progress is the account's `move` (GET /api/admin/accounts/{id})",
    params: idParams,
    body: startMoveSchema,
    response: moveAnswerSchema,
    successStatus: 202,
    errorStatuses: [400, 404, 409, 422],
  }),
  cancel: defineOperation({
    operationId: "cancelAccountMove",
    method: "DELETE",
    path: "/api/admin/accounts/{id}/move",
    audience: "admin",
    tag,
    summary: "Cancel the account's move before its switch: the source keeps serving, the target's copy is removed",
    params: idParams,
    response: moveAnswerSchema,
    successStatus: 202,
    errorStatuses: [404, 409],
  }),
  drain: defineOperation({
    operationId: "drainNode",
    method: "POST",
    path: "/api/admin/nodes/{id}/drain",
    audience: "admin",
    tag,
    summary: "Drain a node: it takes no new accounts, and each of its accounts moves to `to`, one after another",
    params: idParams,
    body: drainNodeSchema,
    response: drainSchema,
    successStatus: 202,
    errorStatuses: [400, 404, 409, 422],
  }),
  moves: defineOperation({
    operationId: "listNodeMoves",
    method: "GET",
    path: "/api/admin/nodes/{id}/moves",
    audience: "admin",
    tag,
    summary: "The moves off a node: those not ended, and those that ended in the last day",
    params: idParams,
    response: drainSchema.pick({ moves: true }),
    successStatus: 200,
    errorStatuses: [404],
  }),
};
