// Types of scripts/bundles.mjs (plain JavaScript: Node runs it without tsx) for the TypeScript
// that imports it.

export interface Bundle {
  source: string;
  outDir: string;
  splitting: boolean;
}

export declare const BUNDLES: Record<"cli" | "server", Bundle>;

/** The path of the bundle's entry, made first when a source is newer than it. */
export declare function bundleEntry(name: keyof typeof BUNDLES): Promise<string>;
