import { isError, type ErrorDescription, type Interface } from "ethers";
import { ApiError, type ErrorCode } from "../http/errors";
import { collectionInterface } from "./collection";
import { editionsInterface } from "./editions";
import { chainUnavailable, isNodeFailure, isUnanswered } from "./unanswered";

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
  // A price in a payment token (TokenPayment)
  PaymentTokenAllowanceTooLow: "TOKEN_ALLOWANCE_TOO_LOW",
  PermitNotApplied: "INVALID_SIGNATURE",
  NativePaymentNotAccepted: "INCORRECT_PAYMENT",
  NotTokenPriced: "VALIDATION_ERROR",
  InvalidPaymentToken: "VALIDATION_ERROR",
};

/** What a revert's decoded form is, and what is known beside it that makes its words exact. */
export interface RevertContext {
  /** The contract that reverted: the collection (or editions contract) of the request. */
  contract?: string;
  /** What the contract holds, when known: an edition's missing token is a missing edition. */
  standard?: "erc721" | "erc1155";
  /** The cap of the collection, or of the edition minted: read for MaxSupplyExceeded. */
  maxSupply?: bigint;
}

/**
 * A contract's revert in the API's words: what happened, with the numbers of its arguments, and the
 * way out (the route or field that fixes it). The decoded error stays in `details` (path "revert").
 */
export class RevertError extends ApiError {
  constructor(
    code: ErrorCode,
    message: string,
    /** The decoded error: its name, arguments and the form `details` shows (`MaxSupplyExceeded(amount=5, remaining=3)`). */
    readonly revert: { name: string; args: readonly unknown[]; decoded: string },
  ) {
    super(code, message, [{ path: "revert", message: revert.decoded }]);
    this.name = "RevertError";
  }

  /** The same revert in words that use what a caller learned since (the contract, its cap). */
  withContext(context: RevertContext): RevertError {
    return revertError(this.revert, context, this.code);
  }
}

/** A revert by name and arguments as a RevertError: its code (REVERT_CODES) and its words (REVERT_WORDS). */
export function revertError(
  revert: { name: string; args: readonly unknown[]; decoded: string },
  context: RevertContext = {},
  code: ErrorCode = REVERT_CODES[revert.name] ?? "CONTRACT_REVERTED",
): RevertError {
  const words = REVERT_WORDS[revert.name]?.(revert.args.map(String), context);
  return new RevertError(code, words ?? `The contract reverted with ${revert.decoded}`, revert);
}

type Words = (args: string[], c: RevertContext) => string;

const collection = (c: RevertContext) => (c.contract ? `Collection ${c.contract}` : "The collection");
const ofCollection = (c: RevertContext) => (c.contract ? ` of ${c.contract}` : "");
const vouchers = (c: RevertContext) => `POST /collections/${c.contract ?? "{address}"}/vouchers`;
const paused: Words = (_, c) =>
  `${collection(c)} is paused; its owner resumes minting with POST /nft/setPaused {"state":false}`;
const missingToken: Words = ([id], c) =>
  id === undefined
    ? `That token does not exist on ${c.contract ?? "the collection"} (not minted yet, or burnt): POST /nft/total-supply says how many are minted`
    : c.standard === "erc1155"
      ? `Edition ${id} does not exist${ofCollection(c)}: its owner creates editions with POST /nft/createEdition`
      : `Token ${id} does not exist${ofCollection(c)} (not minted yet${c.standard === "erc721" ? "" : ", or no such edition"}): POST /nft/total-supply says how many are minted`;
const price: Words = ([required, sent]) =>
  `This mint costs ${required} wei and ${sent} wei were sent: the price changed while the request ran; send it again, the service pays the price it reads`;

/** The words of every custom error of the reference contracts and of what they inherit (OpenZeppelin 5, ERC721A). */
const REVERT_WORDS: Record<string, Words> = {
  // NFTCollection and NFTEditions
  ContractPaused: paused,
  EnforcedPause: paused,
  EditionPaused: ([id], c) =>
    `Minting of edition ${id}${ofCollection(c)} is paused; its owner resumes it with POST /nft/setPaused {"tokenId":"${id}","state":false}`,
  InvalidMintAmount: ([amount, max]) =>
    amount === "0"
      ? `Mint at least 1 token, at most ${max} per transaction`
      : `At most ${max} per transaction; ${amount} were asked: mint ${max} or fewer per request`,
  MintZeroQuantity: () => "Mint at least 1 token: mintAmount 0 mints nothing",
  MaxSupplyExceeded: ([amount, remaining], c) =>
    remaining === "0"
      ? `${collection(c)} is sold out: all ${c.maxSupply ?? "its"} tokens are minted, none are left`
      : `Only ${remaining}${c.maxSupply === undefined ? "" : ` of ${c.maxSupply}`} tokens are left; mint at most ${remaining} (${amount} were asked)`,
  InsufficientPayment: price,
  IncorrectPayment: price,
  NotWhitelisted: ([account], c) =>
    `Minting on ${c.contract ?? "this collection"} is for its whitelist only, and ${account} is not on it: ` +
    `its owner adds it with POST /nft/addUserAddressToWhitelist {"address":"${account}"}`,
  NothingToWithdraw: (_, c) => `${collection(c)} holds 0 wei: nothing to withdraw until paid mints add to its balance`,
  WithdrawFailed: ([to, amount]) =>
    `Sending ${amount} wei to the owner ${to} failed: it is a contract that refuses ether; make an address that accepts it the owner`,
  NonexistentToken: missingToken,
  URIQueryForNonexistentToken: (_, c) => missingToken([], c),
  OwnerQueryForNonexistentToken: (_, c) => missingToken([], c),
  ApprovalQueryForNonexistentToken: (_, c) => missingToken([], c),
  ERC721NonexistentToken: missingToken,
  CostTooHigh: ([cost, max]) => `cost ${cost} wei is above the most the contract takes, ${max} wei: set a lower cost`,
  InvalidConfiguration: () => "maxSupply and maxMintAmountPerTx must each be at least 1",
  InvalidAirdrop: ([recipients, amounts]) =>
    `An airdrop needs at least one recipient and one amount per recipient; got ${recipients} recipients and ${amounts} amounts`,
  NotAllowlisted: ([account, allowance, price], c) =>
    `${account} is not on the allowlist${ofCollection(c)} with allowance ${allowance} at ${price} wei (the proof does not match its root): ` +
    `GET /collections/${c.contract ?? "{address}"}/allowlist/${account} answers its entry and proof`,
  AllowanceExceeded: ([account, allowance, minted, amount]) => {
    const left = BigInt(allowance) - BigInt(minted);
    return `${account} may mint ${allowance} on the allowlist and has minted ${minted}: ${
      left > 0n ? `mint at most ${left}` : "none are left"
    } (${amount} were asked)`;
  },
  VoucherExpired: ([id, validUntil], c) =>
    `Voucher ${id} expired at ${new Date(Number(validUntil) * 1000).toISOString()} (validUntil ${validUntil}): ` +
    `its issuer signs a new one with ${vouchers(c)}`,
  VoucherUsed: ([id], c) =>
    `Voucher ${id} is already redeemed (a voucher mints once): its issuer signs a new one with ${vouchers(c)}`,
  VoucherSignerMismatch: ([recovered, signer], c) =>
    `The voucher is signed by ${recovered}, not by the collection's voucher signer ${signer}: redeem a voucher made by ${vouchers(c)}`,
  VoucherNotForCaller: ([to, caller]) =>
    `The voucher is for ${to}, and the caller is ${caller}: redeem it signing as ${to} (its privateKey or from)`,
  ProvenanceAlreadySet: (_, c) => `The provenance${ofCollection(c)} is committed already, and never changes`,
  InvalidProvenance: ([, count]) =>
    `A provenance needs a non-zero hash and at least 1 token; got ${count} tokens: upload the documents (PUT …/metadata) first`,
  ProvenanceNotSet: (_, c) =>
    `${collection(c)} has no provenance yet: commit one with POST /collections/${c.contract ?? "{address}"}/metadata/commit before the reveal`,
  AlreadyRevealed: (_, c) => `${collection(c)} is revealed already: there is nothing to reveal`,
  RevealTooEarly: ([revealBlock, blockNumber]) =>
    `The reveal opens after block ${revealBlock}; the chain is at block ${blockNumber}: retry in ${
      BigInt(revealBlock) - BigInt(blockNumber) + 1n
    } blocks`,
  InvalidRevealDelay: ([delay]) => `revealDelay must be from 1 to 256 blocks; got ${delay}`,
  InvalidTokenRange: ([from, to]) => `fromTokenId ${from} is above toTokenId ${to}: give the lower id first`,
  InvalidEdition: ([maxSupply, maxPerTx]) =>
    `An edition needs maxMintAmountPerTx from 1 to 4294967295 and maxSupply at most 18446744073709551615; ` +
    `got maxSupply=${maxSupply}, maxMintAmountPerTx=${maxPerTx}`,
  // A price in a payment token (TokenPayment)
  NativePaymentNotAccepted: (_, c) =>
    `${collection(c)} is priced in its payment token and takes no ether: send the mint with value 0`,
  NotTokenPriced: (_, c) =>
    `${collection(c)} is priced in ether, so a permit pays nothing: mint with POST /nft/mint, or set a payment token first`,
  PaymentTokenAllowanceTooLow: ([buyer, allowance, required]) =>
    `${buyer} allows the collection ${allowance} of the payment token and the mint costs ${required}: ` +
    `approve at least ${required}, or sign a permit for it`,
  PermitNotApplied: ([buyer]) =>
    `The permit of ${buyer} did not apply (expired, already used, or not signed by ${buyer}): sign a new permit`,
  InvalidPaymentToken: ([token]) => `${token} is not a contract, so it cannot be a payment token: name an ERC-20`,
  SafeERC20FailedOperation: ([token]) =>
    `The payment token ${token} refused the transfer (the payer's balance or allowance is too low)`,
  // OpenZeppelin 5
  OwnableUnauthorizedAccount: ([account], c) =>
    `Only the owner of ${c.contract ?? "the collection"} may do this; the caller is ${account}: sign as the owner`,
  OwnableInvalidOwner: ([owner]) => `${owner} cannot own a collection: name another owner`,
  ReentrancyGuardReentrantCall: () =>
    "The contract refused a call back into itself (a receiver re-entered it): send to an address that does not",
  ERC2981InvalidDefaultRoyalty: ([numerator, denominator]) =>
    `royaltyBps ${numerator} is above ${denominator} (100%): give at most ${denominator}`,
  ERC2981InvalidDefaultRoyaltyReceiver: ([receiver]) =>
    `The royalty receiver ${receiver} is the zero address: name the address royalties are paid to`,
  ERC2981InvalidTokenRoyalty: ([tokenId, numerator, denominator]) =>
    `The royalty of token ${tokenId}, ${numerator}, is above ${denominator} (100%): give at most ${denominator}`,
  ERC2981InvalidTokenRoyaltyReceiver: ([tokenId, receiver]) =>
    `The royalty receiver of token ${tokenId}, ${receiver}, is the zero address: name the address royalties are paid to`,
  ERC1155InvalidReceiver: ([receiver]) =>
    `The receiver ${receiver} is a contract that does not accept ERC-1155 tokens ` +
    `(it refused onERC1155Received): send to an address that does`,
  ERC1155InsufficientBalance: ([sender, balance, needed, tokenId]) =>
    `${sender} holds ${balance} of token ${tokenId} and ${needed} are needed`,
  ERC1155InvalidSender: ([sender]) => `${sender} cannot send ERC-1155 tokens (the zero address)`,
  ERC1155InvalidApprover: ([approver]) => `${approver} cannot approve (the zero address)`,
  ERC1155InvalidOperator: ([operator]) => `${operator} cannot be an operator (the zero address)`,
  ERC1155MissingApprovalForAll: ([operator, owner]) =>
    `${operator} may not move the tokens of ${owner}: ${owner} approves it first (setApprovalForAll)`,
  ERC1155InvalidArrayLength: ([ids, values]) => `${ids} token ids and ${values} amounts: give one amount per id`,
  InvalidShortString: () => "A name or symbol is not a valid short string",
  StringTooLong: () => "A name or symbol is too long",
  // ERC721A
  MintToZeroAddress: () => "Tokens cannot be minted to the zero address: name a recipient",
  TransferToZeroAddress: () => "Tokens cannot be sent to the zero address: name a recipient",
  TransferToNonERC721ReceiverImplementer: () =>
    "The receiver is a contract that does not accept ERC-721 tokens (onERC721Received): send to an address that does",
  ApprovalCallerNotOwnerNorApproved: () => "Only the token's owner or an approved operator may approve it",
  TransferCallerNotOwnerNorApproved: () => "Only the token's owner or an approved operator may transfer it",
  TransferFromIncorrectOwner: () => "The token is not owned by the address it is sent from",
  BalanceQueryForZeroAddress: () => "The zero address has no balance to ask for: name an owner",
  InvalidQueryRange: () => "The token range asked is empty or reversed: give the lower id first",
  MintERC2309QuantityExceedsLimit: () => "At most 5000 tokens per ERC-2309 mint",
  OwnershipNotInitializedForExtraData: () => "That token's ownership slot is not initialised yet",
  SequentialMintExceedsLimit: () => "The mint would pass the collection's last sequential token id",
  SequentialUpToTooSmall: () => "The collection's sequential token ids end below its first",
  SpotMintTokenIdTooSmall: () => "A spot-minted token id must be above the sequential range",
  NotCompatibleWithSpotMints: () => "This read does not work on a collection with spot mints",
  TokenAlreadyExists: () => "That token exists already",
  // Solidity's own checks
  Panic: ([code]) =>
    `The contract stopped on a failed internal check (Panic 0x${BigInt(code).toString(16)}${
      PANICS[Number(code)] ? `: ${PANICS[Number(code)]}` : ""
    }): a bug in the contract, or a value it cannot handle`,
};

/** Solidity's panic codes. */
const PANICS: Record<number, string> = {
  0x01: "assertion failed",
  0x11: "arithmetic overflow or underflow",
  0x12: "division by zero",
  0x21: "invalid enum value",
  0x32: "array index out of bounds",
  0x41: "out of memory",
  0x51: "call to an uninitialised function",
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

  if (isUnanswered(err) || isUnavailable(e) || isNodeFailure(err)) return chainUnavailable();
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
  if (decoded.name === "Error") {
    const text = String(decoded.args[0]);
    const match = REASON_CODES.find(([pattern]) => pattern.test(text));
    return new ApiError(match ? match[1] : "CONTRACT_REVERTED", text);
  }
  return revertError({ name: decoded.name, args: [...decoded.args], decoded: describe(decoded) });
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
