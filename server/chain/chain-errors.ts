import { isError, type ErrorDescription, type Interface } from "ethers";
import { ApiError, type ErrorCode } from "../http/errors";
import { collectionInterface } from "./collection";
import { editionsInterface } from "./editions";
import { chainUnavailable, isUnanswered } from "./unanswered";

/** Contract errors (ours, OpenZeppelin's, ERC721A's) and the API code each one means. */
const REVERT_CODES: Record<string, ErrorCode> = {
  ContractPaused: "CONTRACT_PAUSED",
  EnforcedPause: "CONTRACT_PAUSED",
  InvalidMintAmount: "INVALID_MINT_AMOUNT",
  IncorrectPayment: "INCORRECT_PAYMENT",
  MintZeroQuantity: "INVALID_MINT_AMOUNT",
  MaxSupplyExceeded: "MAX_SUPPLY_EXCEEDED",
  NotWhitelisted: "NOT_WHITELISTED",
  NothingToWithdraw: "NOTHING_TO_WITHDRAW",
  NonexistentToken: "TOKEN_NOT_FOUND",
  URIQueryForNonexistentToken: "TOKEN_NOT_FOUND",
  OwnerQueryForNonexistentToken: "TOKEN_NOT_FOUND",
  ERC721NonexistentToken: "TOKEN_NOT_FOUND",
  OwnableUnauthorizedAccount: "NOT_CONTRACT_OWNER",
  NotAllowlisted: "NOT_ALLOWLISTED",
  AllowanceExceeded: "ALLOWANCE_EXCEEDED",
  VoucherUsed: "VOUCHER_USED",
  VoucherExpired: "VOUCHER_EXPIRED",
  VoucherSignerMismatch: "VOUCHER_INVALID",
  VoucherNotForCaller: "VOUCHER_INVALID",
  // ERC-1155 editions (NFTEditions); NonexistentToken, MaxSupplyExceeded and the rest are shared above.
  EditionPaused: "CONTRACT_PAUSED",
  InvalidEdition: "VALIDATION_ERROR",
  ERC1155InvalidReceiver: "CONTRACT_REVERTED",
};

/** Errors whose decoded arguments say too little: the API's own words instead. */
const REVERT_MESSAGES: Record<string, (args: readonly unknown[]) => string> = {
  EditionPaused: (args) => `Minting of edition ${String(args[0])} is paused (EditionPaused)`,
  InvalidEdition: (args) =>
    `An edition needs maxMintAmountPerTx from 1 to 4294967295 and maxSupply at most 18446744073709551615; ` +
    `got maxSupply=${String(args[0])}, maxMintAmountPerTx=${String(args[1])} (InvalidEdition)`,
  ERC1155InvalidReceiver: (args) =>
    `The receiver ${String(args[0])} is a contract that does not accept ERC-1155 tokens ` +
    `(it refused onERC1155Received): send to an address that does (ERC1155InvalidReceiver)`,
};

/** Revert strings of older (OpenZeppelin 4) collections. */
const REASON_CODES: Array<[RegExp, ErrorCode]> = [
  [/caller is not the owner/i, "NOT_CONTRACT_OWNER"],
  [/nonexistent token/i, "TOKEN_NOT_FOUND"],
  [/paused/i, "CONTRACT_PAUSED"],
];

const UNAVAILABLE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ENOTFOUND",
  "EHOSTUNREACH",
  "EAI_AGAIN",
  "EPIPE",
  "ETIMEDOUT",
  "TIMEOUT",
  "NETWORK_ERROR",
  "SERVER_ERROR",
]);

const FUNDS_PATTERN = /insufficient funds|enough funds|exceeds balance/i;
/** A call that ran out of gas (Hardhat: "Transaction ran out of gas"; geth: "out of gas"), often under the node's cap for calls. */
const OUT_OF_GAS_PATTERN = /out of gas|gas required exceeds allowance/i;

/** Whether a node's error (thrown or answered) says the call ran out of gas: a big read, not a contract that does not answer. */
export function isOutOfGas(err: unknown): boolean {
  return OUT_OF_GAS_PATTERN.test(nodeMessage((err ?? {}) as { message?: string }));
}

/**
 * Maps whatever ethers or the node threw into the API's error taxonomy. `emptyRevert` is what an
 * empty revert means for this call: a read answered with nothing comes from code that does not
 * speak this ABI; a write reverting without data is just a revert.
 */
export function toChainApiError(err: unknown, emptyRevert: ErrorCode = "CONTRACT_REVERTED"): ApiError {
  if (err instanceof ApiError) return err;
  const e = err as {
    code?: string;
    data?: unknown;
    message?: string;
    info?: { error?: { message?: string } };
    error?: { message?: string };
  };

  if (isUnanswered(err) || isUnavailable(e)) return chainUnavailable();
  if (isError(err, "INSUFFICIENT_FUNDS") || FUNDS_PATTERN.test(nodeMessage(e))) {
    return new ApiError("INSUFFICIENT_FUNDS", "The caller's balance cannot pay value + gas");
  }
  // Before the empty-revert rule: running out of gas says nothing about the code's ABI.
  if (isOutOfGas(err)) {
    return new ApiError(
      "CONTRACT_REVERTED",
      "The call ran out of gas (the node caps the gas of a call): the read is too large for one call",
    );
  }
  if (isError(err, "BAD_DATA")) {
    return new ApiError("UNSUPPORTED_CONTRACT", "The code at contractAddress does not answer this ABI");
  }
  if (isError(err, "CALL_EXCEPTION")) {
    const data = typeof e.data === "string" ? e.data : undefined;
    if (!data || data === "0x") {
      return new ApiError(
        emptyRevert,
        emptyRevert === "CONTRACT_REVERTED"
          ? "The contract reverted without a reason"
          : "The code at contractAddress does not answer this ABI",
      );
    }
    return fromRevertData(data);
  }
  return new ApiError("INTERNAL_ERROR", "Unexpected chain error");
}

/** Decodes revert data (a custom error, Error(string) or Panic(uint256)) into an ApiError. */
function fromRevertData(data: string): ApiError {
  // The ERC-721 collection's errors first; what it does not know may be an edition's (or ERC-1155's).
  const decoded = parseErrorWith(collectionInterface(), data) ?? parseErrorWith(editionsInterface(), data);
  if (!decoded)
    return new ApiError("CONTRACT_REVERTED", `The contract reverted with unknown error data ${data.slice(0, 10)}`);
  const reason = describe(decoded);
  if (decoded.name === "Error") {
    const text = String(decoded.args[0]);
    const match = REASON_CODES.find(([pattern]) => pattern.test(text));
    return new ApiError(match ? match[1] : "CONTRACT_REVERTED", text);
  }
  const message = REVERT_MESSAGES[decoded.name]?.(decoded.args) ?? reason;
  return new ApiError(REVERT_CODES[decoded.name] ?? "CONTRACT_REVERTED", message);
}

function parseErrorWith(iface: Interface, data: string): ErrorDescription | null {
  try {
    return iface.parseError(data);
  } catch {
    return null;
  }
}

function describe(decoded: ErrorDescription): string {
  const args = decoded.fragment.inputs.map((input, i) => `${input.name || i}=${String(decoded.args[i])}`);
  return `${decoded.name}(${args.join(", ")})`;
}

function isUnavailable(e: { code?: string; message?: string }): boolean {
  if (e.code && UNAVAILABLE_CODES.has(e.code)) return true;
  return /ECONNREFUSED|ECONNRESET|socket hang up|fetch failed|request timeout/i.test(e.message ?? "");
}

export function isNonceConflict(err: unknown): boolean {
  if (isError(err, "NONCE_EXPIRED") || isError(err, "REPLACEMENT_UNDERPRICED")) return true;
  return /nonce too (low|high)|nonce has already been used|replacement (transaction )?underpriced|already known/i.test(
    nodeMessage(err as { message?: string }),
  );
}

function nodeMessage(e: {
  message?: string;
  info?: { error?: { message?: string } };
  error?: { message?: string };
}): string {
  return [e.message, e.info?.error?.message, e.error?.message].filter(Boolean).join(" | ");
}
