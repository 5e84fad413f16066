import { z } from "zod";
import { PHP_SETTING_MAXIMA, type PhpSettings } from "@/lib/provisioning/rules";

// An account's PHP settings (DESIGN.md "Running applications"), written as php_admin_value in
// every pool of the account; nginx's client_max_body_size follows post_max_size_mb.

/** What an account has until it changes them: enough for WordPress and most PHP applications. */
export const DEFAULT_PHP_SETTINGS = {
  upload_max_filesize_mb: 64,
  post_max_size_mb: 64,
  memory_limit_mb: 256,
  max_execution_time_s: 60,
  max_input_vars: 3000,
  display_errors: false,
} as const;


const whole = (min: number, max: number) =>
  z.number("must be a number").int("must be a whole number").min(min, `must be at least ${min}`).max(max, `must be at most ${max}`);

export const phpSettingsSchema = z.object({
  upload_max_filesize_mb: whole(1, PHP_SETTING_MAXIMA.upload_max_filesize_mb),
  post_max_size_mb: whole(1, PHP_SETTING_MAXIMA.post_max_size_mb),
  memory_limit_mb: whole(16, PHP_SETTING_MAXIMA.memory_limit_mb),
  max_execution_time_s: whole(1, PHP_SETTING_MAXIMA.max_execution_time_s),
  max_input_vars: whole(100, PHP_SETTING_MAXIMA.max_input_vars),
  display_errors: z.boolean(),
});
/** The settings as the provisioning layer takes them (php-fpm.ts); the schema produces exactly these. */
export type { PhpSettings };

/** What GET and PUT answer: the settings in force. */
export const phpSettingsRecordSchema = z.object({
  upload_max_filesize_mb: z.number().int(),
  post_max_size_mb: z.number().int(),
  memory_limit_mb: z.number().int(),
  max_execution_time_s: z.number().int(),
  max_input_vars: z.number().int(),
  display_errors: z.boolean(),
});

/** PUT /api/client/php-settings: any of the fields; the others keep their values. */
export const updatePhpSettingsSchema = phpSettingsSchema.partial().strict();
