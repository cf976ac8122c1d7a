/**
 * The error taxonomy of the API: every failure a handler can meet is an ApiError with an HTTP
 * status and a stable code. Only the error middleware turns them into responses.
 */
export const ERROR_STATUS = {
  VALIDATION_ERROR: 400,
  CHAIN_REQUIRED: 400,
  WEBHOOK_URL_FORBIDDEN: 400,
  INVALID_CREDENTIALS: 400,
  INVALID_USERNAME: 400,
  PERMIT_EXPIRED: 400,
  INVALID_SIGNATURE: 400,
  INVALID_API_KEY: 401,
  UNAUTHORIZED: 401,
  INSUFFICIENT_FUNDS: 402,
  INSUFFICIENT_TOKEN_BALANCE: 402,
  NOT_CONTRACT_OWNER: 403,
  NOT_WHITELISTED: 403,
  FORBIDDEN: 403,
  NOT_ALLOWLISTED: 403,
  VOUCHER_INVALID: 403,
  CONTRACT_NOT_FOUND: 404,
  TOKEN_NOT_FOUND: 404,
  USER_NOT_FOUND: 404,
  NOT_FOUND: 404,
  OPERATION_NOT_FOUND: 404,
  JOB_NOT_FOUND: 404,
  WALLET_NOT_FOUND: 404,
  COLLECTION_NOT_FOUND: 404,
  ALLOWLIST_NOT_FOUND: 404,
  VOUCHER_NOT_FOUND: 404,
  CHAIN_NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONTRACT_PAUSED: 409,
  MAX_SUPPLY_EXCEEDED: 409,
  NOTHING_TO_WITHDRAW: 409,
  USERNAME_TAKEN: 409,
  IDEMPOTENCY_KEY_IN_USE: 409,
  TRANSACTION_ABANDONED: 409,
  WALLET_EXISTS: 409,
  WALLET_BUSY: 409,
  SPEND_LIMIT_EXCEEDED: 409,
  ALLOWANCE_EXCEEDED: 409,
  VOUCHER_USED: 409,
  VOUCHER_EXPIRED: 409,
  TOKEN_ALLOWANCE_TOO_LOW: 409,
  TOO_LARGE_FOR_ONE_TRANSACTION: 413,
  JOB_NOT_RUNNABLE: 409,
  METADATA_FROZEN: 409,
  METADATA_NOT_REVEALED: 409,
  PROVENANCE_NOT_SET: 409,
  REVEAL_TOO_EARLY: 409,
  APPROVAL_NOT_PENDING: 409,
  /** Operation failures of a held write (its error.code), and what a replay of its Idempotency-Key answers. */
  APPROVAL_REJECTED: 409,
  APPROVAL_EXPIRED: 409,
  INVALID_MINT_AMOUNT: 422,
  INCORRECT_PAYMENT: 422,
  UNSUPPORTED_CONTRACT: 422,
  CONTRACT_REVERTED: 422,
  IDEMPOTENCY_KEY_REUSED: 422,
  PUBLIC_URL_NOT_PUBLIC: 422,
  PERMIT_UNSUPPORTED: 422,
  RATE_LIMITED: 429,
  INTERNAL_ERROR: 500,
  CHAIN_UNAVAILABLE: 503,
  STORE_UNAVAILABLE: 503,
  INDEX_BEHIND: 503,
  SIGNER_UNAVAILABLE: 503,
  SERVICE_BUSY: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/**
 * 404 WALLET_NOT_FOUND: one answer for a wallet the service does not hold and for one the access
 * key may not use, naming neither what was asked (`from` may hold a pasted private key) nor whether
 * it exists.
 */
export function walletNotFound(): ApiError {
  return new ApiError(
    "WALLET_NOT_FOUND",
    "No wallet with this address or label is held for this access key: GET /wallets lists those it may use",
  );
}

export interface ErrorDetail {
  path: string;
  message: string;
}

export class ApiError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetail[],
    /** Extra response headers, e.g. Retry-After on 429. */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = "ApiError";
    this.status = ERROR_STATUS[code];
  }
}

export interface ErrorBody {
  error: { code: ErrorCode; message: string; details?: ErrorDetail[]; operationId?: string };
}

/** The error envelope; `operationId` names the operation of a write that failed after it was sent. */
export function errorBody(err: ApiError, operationId?: string): ErrorBody {
  return {
    error: {
      code: err.code,
      message: err.message,
      ...(err.details ? { details: err.details } : {}),
      ...(operationId ? { operationId } : {}),
    },
  };
}
