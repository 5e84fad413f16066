"use client";

import { zodResolver } from "@hookform/resolvers/zod";
import Link from "next/link";
import { useRouter } from "next/navigation";
import {
  type BaseSyntheticEvent,
  createContext,
  type FormEvent,
  type InputHTMLAttributes,
  type ReactNode,
  useContext,
  useEffect,
  useRef,
  useState,
  useTransition,
} from "react";
import {
  type DefaultValues,
  type FieldValues,
  type Path,
  type RegisterOptions,
  useForm,
  type UseFormReturn,
} from "react-hook-form";
import type { z } from "zod";
import type { FormState } from "@/lib/admin-session/form-state";
import { plainErrorMap } from "@/lib/validation-messages";
import { announce } from "./status-message";
import { useHydrated } from "./use-hydrated";

// The admin pages' form pattern: react-hook-form checks the values with the lib/ zod schema the
// service uses, the server action parses them again and answers with errors per field, and each
// error is shown at its field. On success the page goes back to its list, which says what was
// done (components/status-message.tsx).

export type AnyForm<Values extends FieldValues> = UseFormReturn<Values, unknown, unknown>;

/**
 * A form on `schema` whose submit calls `save` (a server action). Server-side field errors land
 * at their fields, any other message above the form; success goes to `doneHref`, which says
 * `done` (what was saved, from the values sent), or to `onSaved` with what the action sent back
 * and the name of the button that sent the form.
 */
export function useAdminForm<Schema extends z.ZodType<unknown, FieldValues>, Saved = never>({
  schema,
  defaultValues,
  save,
  doneHref,
  done,
  onSaved,
}: {
  schema: Schema;
  defaultValues: DefaultValues<z.input<Schema>>;
  save: (values: z.output<Schema>) => Promise<FormState | { saved: Saved }>;
  doneHref: string;
  done?: (values: z.output<Schema>) => string;
  onSaved?: (saved: Saved, button?: string) => void;
}) {
  type Values = z.input<Schema>;
  const router = useRouter();
  const [message, setMessage] = useState<string | null>(null);
  const form = useForm<Values, unknown, z.output<Schema>>({
    // The whole form is checked at once, every field's error in the same plain words as the server's.
    resolver: zodResolver(schema, { error: plainErrorMap }),
    defaultValues,
  });
  const onSubmit = form.handleSubmit(async (values, event) => {
    const result = await save(values);
    if (result && !("saved" in result)) {
      // Errors of the form's own fields are shown there (the first one focused); only the rest
      // goes above the form.
      const fields = new Set(Object.keys(form.getValues()));
      const elsewhere: string[] = [];
      let placed = 0;
      for (const [path, messages] of Object.entries(result.fieldErrors ?? {})) {
        const field = path.split(".")[0];
        if (!fields.has(field)) {
          elsewhere.push(...messages.map((message) => sentence(path, message)));
          continue;
        }
        form.setError(field as Path<Values>, { message: messages.join(" ") }, { shouldFocus: placed === 0 });
        placed += 1;
      }
      setMessage(elsewhere.length ? elsewhere.join(" ") : placed ? null : (result.error ?? null));
      return;
    }
    setMessage(null);
    const donePath = new URL(doneHref, window.location.href).pathname;
    if (result && onSaved) {
      if (done) announce(done(values), { path: donePath });
      const button = (event?.nativeEvent as SubmitEvent | undefined)?.submitter?.getAttribute("name");
      return onSaved(result.saved, button ?? undefined);
    }
    if (done) announce(done(values), { path: donePath });
    router.push(doneHref);
    router.refresh();
  });
  return { form, message, onSubmit };
}

/**
 * The account-page panels' buttons and small forms, which call a server action directly: `run`
 * calls it in a transition; a refusal is kept in `state` (field errors through `fieldError`), a
 * success clears it, says `status` at the top of the page (a text, or one made from what the
 * action sent back; null says nothing, when `then` says it in place) and calls `then` with what
 * the action sent back. Either way the page's data is read again (router.refresh).
 */
export function useAdminAction() {
  const router = useRouter();
  const [pending, startTransition] = useTransition();
  const [state, setState] = useState<FormState>(null);
  const fieldError = (field: string) => state?.fieldErrors?.[field]?.[0];
  const run = <Saved,>(
    action: () => Promise<FormState | { saved: Saved }>,
    then?: (saved: Saved | undefined) => void,
    status?: string | ((saved: Saved | undefined) => string | null),
  ) =>
    startTransition(async () => {
      const result = await action();
      if (result && !("saved" in result)) {
        setState(result);
      } else {
        setState(null);
        const text = typeof status === "function" ? status(result?.saved) : status;
        if (text) announce(text);
        then?.(result?.saved);
      }
      router.refresh();
    });
  return { pending, state, fieldError, run };
}

/**
 * A field's error as a sentence: the services' and schemas' messages are predicates written to
 * follow the field's name ("is already a plan"), so they get the label in front.
 */
const sentence = (label: string, message: string) => (/^[a-z]/.test(message) ? `${label} ${message}` : message);

/** A field's label, hint and error around its control (`id` is the control's). */
export function FieldFrame({ id, label, hint, error, children }: { id: string; label: string; hint?: ReactNode; error?: string; children: ReactNode }) {
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children}
      {hint && (
        <p className="hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
      {error && (
        <p className="error" id={`${id}-error`}>
          {sentence(label, error)}
        </p>
      )}
    </div>
  );
}

/** A text input held in the page's own state (the small action forms, outside react-hook-form), in its FieldFrame. */
export function TextField({
  id,
  label,
  hint,
  value,
  onChange,
  error,
  autoComplete,
}: {
  id: string;
  label: string;
  hint?: string;
  value: string;
  onChange: (value: string) => void;
  error?: string;
  autoComplete?: string;
}) {
  return (
    <FieldFrame id={id} label={label} hint={hint} error={error}>
      <input
        id={id}
        type="text"
        autoComplete={autoComplete}
        value={value}
        aria-invalid={error ? true : undefined}
        aria-describedby={describedBy(id, hint, error)}
        onChange={(event) => onChange(event.target.value)}
      />
    </FieldFrame>
  );
}

/** A destructive action's confirmation: the account's username typed again (its server action checks it too). */
export function UsernameConfirmationField({ id, value, onChange, error }: { id: string; value: string; onChange: (value: string) => void; error?: string }) {
  return <TextField id={id} label="Type the username to confirm" autoComplete="off" value={value} onChange={onChange} error={error} />;
}

/**
 * A step that cannot be undone, in a form of its own: what it does (`children`), the record's
 * `name` typed to confirm (`what` names it: "username", "node's name"), then `verb` and Cancel.
 */
export function ConfirmByNameForm({
  id,
  name,
  what,
  verb,
  pending,
  error,
  onConfirm,
  onCancel,
  children,
}: {
  id: string;
  name: string;
  what: string;
  verb: string;
  pending: boolean;
  error?: string;
  onConfirm: (confirmation: string) => void;
  onCancel: () => void;
  children: React.ReactNode;
}) {
  const [confirmation, setConfirmation] = useState("");
  return (
    <form
      className="notice"
      onSubmit={(event) => {
        event.preventDefault();
        onConfirm(confirmation);
      }}
    >
      {children}
      <TextField id={id} label={`Type the ${what} to confirm`} autoComplete="off" value={confirmation} onChange={setConfirmation} error={error} />
      <button type="submit" className="danger" disabled={pending || confirmation.trim() !== name}>
        {verb} {name}
      </button>{" "}
      <button type="button" onClick={onCancel}>
        Cancel
      </button>
    </form>
  );
}

export function describedBy(id: string, hint: unknown, error: unknown) {
  return [hint ? `${id}-hint` : "", error ? `${id}-error` : ""].filter(Boolean).join(" ") || undefined;
}

const errorOf = <Values extends FieldValues>(form: AnyForm<Values>, name: Path<Values>) =>
  form.formState.errors[name]?.message as string | undefined;

/** A labelled text, email or number input bound to `name`, its error below it. */
export function InputField<Values extends FieldValues>({
  form,
  name,
  label,
  hint,
  options,
  ...input
}: {
  form: AnyForm<Values>;
  name: Path<Values>;
  label: string;
  hint?: ReactNode;
  options?: RegisterOptions<Values, Path<Values>>;
} & Omit<InputHTMLAttributes<HTMLInputElement>, "name" | "form">) {
  const error = errorOf(form, name);
  return (
    <FieldFrame id={name} label={label} hint={hint} error={error}>
      <input
        id={name}
        type="text"
        {...input}
        {...form.register(name, options)}
        aria-invalid={Boolean(error)}
        aria-describedby={describedBy(name, hint, error)}
      />
    </FieldFrame>
  );
}

/** A labelled select bound to `name`; the empty value (when offered) reads as null or undefined. */
export function SelectField<Values extends FieldValues>({
  form,
  name,
  label,
  hint,
  choices,
  options,
}: {
  form: AnyForm<Values>;
  name: Path<Values>;
  label: string;
  hint?: ReactNode;
  choices: { value: string; label: string }[];
  options?: RegisterOptions<Values, Path<Values>>;
}) {
  const error = errorOf(form, name);
  return (
    <FieldFrame id={name} label={label} hint={hint} error={error}>
      <select id={name} {...form.register(name, options)} aria-invalid={Boolean(error)} aria-describedby={describedBy(name, hint, error)}>
        {choices.map((choice) => (
          <option key={choice.value} value={choice.value}>
            {choice.label}
          </option>
        ))}
      </select>
    </FieldFrame>
  );
}

/** A checkbox whose label is the text beside it. */
export function CheckboxField<Values extends FieldValues>({
  form,
  name,
  label,
  hint,
}: {
  form: AnyForm<Values>;
  name: Path<Values>;
  label: string;
  hint?: ReactNode;
}) {
  const error = errorOf(form, name);
  return (
    <div className="field">
      <label className="check">
        <input type="checkbox" {...form.register(name)} aria-describedby={describedBy(name, hint, error)} /> {label}
      </label>
      {hint && (
        <p className="hint" id={`${name}-hint`}>
          {hint}
        </p>
      )}
      {error && (
        <p className="error" id={`${name}-error`}>
          {sentence(label, error)}
        </p>
      )}
    </div>
  );
}

/**
 * Fields edited entry by entry (an address typed, then "Add") register here how to take in text
 * typed but not added. On submit every such field takes it in first, or refuses it at the field,
 * and then nothing is sent: what the admin typed is never silently dropped.
 */
const PendingEntries = createContext<Map<string, () => boolean> | null>(null);

/** For an entry-by-entry field: `takeIn` adds the pending text (true) or shows why not (false). */
export function usePendingEntry(name: string, takeIn: () => boolean) {
  const registry = useContext(PendingEntries);
  const latest = useRef(takeIn);
  latest.current = takeIn;
  useEffect(() => {
    registry?.set(name, () => latest.current());
    return () => void registry?.delete(name);
  }, [registry, name]);
}

/** The form element: the message of a refused save on top, then the fields, then the buttons. */
export function AdminForm<Values extends FieldValues>({
  form,
  message,
  onSubmit,
  submitLabel,
  moreButtons,
  cancelHref,
  children,
}: {
  form: AnyForm<Values>;
  message: string | null;
  onSubmit: (event?: BaseSyntheticEvent) => Promise<void>;
  submitLabel: string;
  /** Buttons between the submit button and Cancel (e.g. "Create & create another"). */
  moreButtons?: ReactNode;
  /** Where Cancel leads; no Cancel button without it. */
  cancelHref?: string;
  children: ReactNode;
}) {
  const [pending] = useState(() => new Map<string, () => boolean>());
  const hydrated = useHydrated();
  function submit(event: FormEvent<HTMLFormElement>) {
    const takenIn = [...pending.values()].map((takeIn) => takeIn());
    if (takenIn.every(Boolean)) return onSubmit(event);
    event.preventDefault();
  }
  return (
    <PendingEntries.Provider value={pending}>
      {/* method="post": a submit the browser makes itself never puts the fields in the URL. */}
      <form method="post" onSubmit={submit} noValidate className="form">
        {message && (
          <p className="alert" role="alert">
            {message}
          </p>
        )}
        {children}
        <div className="actions">
          <button className="primary" type="submit" disabled={!hydrated || form.formState.isSubmitting}>
            {submitLabel}
          </button>
          {moreButtons}
          {cancelHref && (
            <Link className="button" href={cancelHref}>
              Cancel
            </Link>
          )}
        </div>
      </form>
    </PendingEntries.Provider>
  );
}

/** register() options for an optional select or input: "" is "none" (null) or "left out" (undefined). */
export const emptyAs = <Empty extends null | undefined>(empty: Empty) => ({
  setValueAs: (value: unknown) => (value === "" || value === undefined || value === null ? empty : value),
});

/** register() options for a number input where empty means null (e.g. an unlimited quota). */
export const numberOrNull = {
  setValueAs: (value: unknown) => (value === "" || value === undefined || value === null ? null : Number(value)),
};

/** register() options for an optional number input, or a select of record ids, where empty means "left out". */
export const numberOrUndefined = {
  setValueAs: (value: unknown) => (value === "" || value === undefined || value === null ? undefined : Number(value)),
};
