import { useSyncExternalStore } from "react";

const subscribe = () => () => {};

/**
 * False while the page is rendered on the server and until React has hydrated it, true after: a
 * control that works only through JavaScript is disabled until then. A form submitted before
 * would go by the browser's own rules — a GET with every field, a password too, in the URL — and
 * a button clicked before does nothing at all.
 */
export const useHydrated = () => useSyncExternalStore(subscribe, () => true, () => false);
