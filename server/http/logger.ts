import pino, { type Logger } from "pino";

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

/** The service's structured logger; `destination` lets tests capture every line. */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  // Stdout is written asynchronously: lines that arrive while a write is in flight go out together
  // in the next one, instead of one blocking syscall per request. pino flushes on exit.
  return pino(
    { level, redact: { paths: REDACTED_PATHS, censor: "[redacted]" } },
    destination ?? pino.destination({ dest: 1, sync: false }),
  );
}
