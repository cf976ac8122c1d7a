import pino, { type Logger } from "pino";
import pinoPretty from "pino-pretty";
import { credentialFragments, credentialScrubber } from "../config/credentials";

export type { Logger };

/** Paths pino replaces with "[redacted]" wherever they appear in a log object. */
export const REDACTED_PATHS = [
  "privateKey",
  "*.privateKey",
  "*.*.privateKey",
  "password",
  "*.password",
  "*.*.password",
  "apiKey",
  "*.apiKey",
  "*.*.apiKey",
  'headers["api_key"]',
  'headers["x-api-key"]',
  'req.headers["api_key"]',
  'req.headers["x-api-key"]',
];

export interface LoggerOptions {
  /**
   * Connection URLs (RPC_URL, DATABASE_URL) whose credentials must never reach a log line: their
   * password, key-like path segments and query values are scrubbed from every line written, as
   * is any URL userinfo or secret-looking query value, wherever it appears (messages, stacks).
   */
  secretUrls?: readonly (string | undefined)[];
  /** Human-readable lines (pino-pretty) instead of JSON, for a terminal. */
  pretty?: boolean;
}

/** The service's structured logger; `destination` lets tests capture every line. */
export function createLogger(level: string, destination?: pino.DestinationStream, options: LoggerOptions = {}): Logger {
  const scrub = credentialScrubber((options.secretUrls ?? []).flatMap(credentialFragments));
  return pino(
    {
      level,
      redact: { paths: REDACTED_PATHS, censor: "[redacted]" },
      // Runs on the serialised line, so nothing a serialiser or an error message adds escapes it.
      hooks: { streamWrite: scrub },
    },
    destination ??
      (options.pretty
        ? pinoPretty({ colorize: true, translateTime: "SYS:HH:MM:ss.l", ignore: "pid,hostname", sync: true })
        : // Stdout is written asynchronously: lines that arrive while a write is in flight go out together
          // in the next one, instead of one blocking syscall per request. pino flushes on exit.
          pino.destination({ dest: 1, sync: false })),
  );
}

/** Whether LOG_FORMAT asks for pretty lines: always, never, or ("auto") when stdout is a terminal. */
export function wantsPrettyLogs(format: "auto" | "json" | "pretty", stdoutIsTerminal: boolean): boolean {
  return format === "pretty" || (format === "auto" && stdoutIsTerminal);
}
