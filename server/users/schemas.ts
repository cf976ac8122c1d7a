import { z } from "zod";
import "../http/openapi"; // extends zod with .openapi() before any schema here is built

/** 1-64 of [A-Za-z0-9._-], case-sensitive; "login"/"logout" would be shadowed by those routes. */
export const USERNAME_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;
const RESERVED_USERNAMES = new Set(["login", "logout"]);

export const Username = z
  .string()
  .regex(USERNAME_PATTERN, "must be 1-64 characters of A-Z a-z 0-9 . _ -")
  .refine((name) => !RESERVED_USERNAMES.has(name), "is reserved")
  .openapi({ example: "user1" });

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** int64 as a JSON integer (exact, so at most 2^53-1 in magnitude) or a decimal string. */
export const Int64Input = z
  .union([
    z.number().int().refine(Number.isSafeInteger, "beyond 2^53 send it as a decimal string"),
    z.string().regex(/^-?\d{1,19}$/, "must be a decimal integer"),
  ])
  .transform((value) => BigInt(value))
  .refine((value) => value >= INT64_MIN && value <= INT64_MAX, "must be within int64")
  .openapi({ description: "int64 as a JSON integer or a decimal string", example: 10 });

const Int32 = z
  .number()
  .int()
  .min(-(2 ** 31))
  .max(2 ** 31 - 1);

/**
 * What PostgreSQL text cannot hold exactly: NUL (refused: a 500 before this check) and lone
 * UTF-16 surrogates (no UTF-8 form: silently replaced by U+FFFD). A password with either would
 * hash differently than it reads.
 */
// eslint-disable-next-line no-control-regex -- NUL is exactly what this looks for
const NOT_STORABLE = /[\u0000\p{Cs}]/u;
const storable = (value: string) => !NOT_STORABLE.test(value);
const STORABLE_MESSAGE = "must not contain NUL characters or unpaired UTF-16 surrogates";

const Text = z.string().max(256).refine(storable, STORABLE_MESSAGE);
const Password = z.string().min(1).max(1024).refine(storable, STORABLE_MESSAGE);

/**
 * A User in a request. Every field may be null, read as absent: generated Petstore clients send
 * `null` for fields they do not set, and that must not wipe stored values on update.
 */
export const UserInput = z
  .object({
    id: Int64Input.nullish(),
    username: Username.nullish(),
    firstName: Text.nullish(),
    lastName: Text.nullish(),
    email: Text.nullish(),
    password: Password.nullish(),
    phone: Text.nullish(),
    userStatus: Int32.nullish().openapi({ description: "User Status (int32)" }),
  })
  .openapi("UserInput");

/** A user to create: like UserInput, but the username is required. */
export const NewUserInput = UserInput.extend({ username: Username }).openapi("NewUser");

export type UserInputValue = z.output<typeof UserInput>;

/** A User in a response: never a password; `id` a decimal string (int64 may exceed 2^53). */
export const UserOutput = z
  .object({
    id: z
      .string()
      .regex(/^-?\d+$/)
      .openapi({ description: "int64 as a decimal string", example: "10" }),
    username: z.string(),
    firstName: z.string().optional(),
    lastName: z.string().optional(),
    email: z.string().optional(),
    phone: z.string().optional(),
    userStatus: z.number().int().optional(),
  })
  .openapi("User");

/** Petstore's ApiResponse, the body of every successful write. */
export const ApiResponse = z
  .object({
    code: z.number().int().openapi({ example: 200 }),
    type: z.string().openapi({ example: "unknown" }),
    message: z.string().openapi({ example: "ok" }),
  })
  .openapi("ApiResponse");

export const UsernameParams = z.object({ username: Username.openapi({ param: { name: "username", in: "path" } }) });

export function apiResponse(message: string): z.infer<typeof ApiResponse> {
  return { code: 200, type: "unknown", message };
}
