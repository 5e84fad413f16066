"use client";

import { useActionState } from "react";
import { createFirstAdmin } from "./actions";

export function SetupForm({ token }: { token: string }) {
  const [state, action, pending] = useActionState(createFirstAdmin.bind(null, token), null);
  const fieldError = (field: string) =>
    state?.fieldErrors?.[field] && <p className="error">{state.fieldErrors[field].join(" ")}</p>;
  return (
    <form action={action}>
      {state?.error && <p className="alert" role="alert">{state.error}</p>}
      <div className="field">
        <label htmlFor="name">Name</label>
        <input id="name" name="name" type="text" autoComplete="name" />
      </div>
      <div className="field">
        <label htmlFor="email">Email</label>
        <input id="email" name="email" type="email" autoComplete="username" required />
        {fieldError("email")}
      </div>
      <div className="field">
        <label htmlFor="password">Password</label>
        <input id="password" name="password" type="password" autoComplete="new-password" required />
        <p className="hint">At least 10 characters.</p>
        {fieldError("password")}
      </div>
      <button className="primary" type="submit" disabled={pending}>
        Create admin
      </button>
    </form>
  );
}
