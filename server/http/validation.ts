import { z } from "zod";
import { ApiError } from "./errors";

/** Parses `input` with `schema`, or throws 400 VALIDATION_ERROR naming each bad field. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const details = result.error.issues.map((issue) => ({
    path: issue.path.map(String).join(".") || "(body)",
    message: issue.message,
  }));
  throw new ApiError(
    "VALIDATION_ERROR",
    `Invalid request: ${details.map((d) => `${d.path}: ${d.message}`).join("; ")}`,
    details,
  );
}
