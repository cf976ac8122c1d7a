import { z } from "zod";
import type { AccessDeclaration, Scope } from "../access";
import { READ_ACCESS } from "../collections/routes/common";
import { READ as JOB_READ, SCOPE_OF_KIND } from "../jobs/routes/deps";
import { NFT_ROUTES } from "../nft";
import { LIST_ACCESS } from "../nft/list-operations";
import { OPERATION_ACCESS } from "../nft/operations";
import { READ as WALLET_READ, READ_ONE as WALLET_READ_ONE } from "../wallets/routes/deps";

/**
 * How a write tool is planned before it sends: `dryRun` — the route itself simulates (`?dryRun=true`
 * on an /nft write: the call, gas, cost, no record); `jobDryRun` — POST /jobs' own `dryRun`;
 * `read` — a read route shows what the change would act on; `none` — nothing to simulate (no
 * transaction: a voucher is a signature).
 */
export type PlanBy = { by: "dryRun" } | { by: "jobDryRun" } | { by: "read"; route: string } | { by: "none" };

/** One tool: the route it calls and what the tool changes of that route's input. */
export interface ToolSpec {
  name: string;
  title: string;
  description: string;
  /** The route's OpenAPI operationId: its schemas are the tool's input (route-schemas.ts). */
  route: string;
  /** The route's own access declaration(s): the tool is listed to a key holding any of their scopes. */
  access: AccessDeclaration[];
  /** Unset for a read. */
  write?: PlanBy & {
    /** An airdrop that does not fit in one transaction becomes a job (create_job's route). */
    tooLargeAsJob?: boolean;
    /** How many tokens the arguments mint: the plan shows their ids and the supply after (ids run on from the supply). */
    mints?: (args: Record<string, unknown>) => bigint;
  };
  /** Route fields the tool does not take (privateKey never is). */
  omit?: string[];
  /** The route field naming a collection, where not `contractAddress` nor a `/collections/{address}` path: the tool calls it contractAddress. */
  collectionField?: string;
  /** Fields the tool bounds more tightly than its route (page sizes: answers stay under 20,000 characters). */
  extend?: z.ZodRawShape;
}

const nftAccess = (operation: string): AccessDeclaration[] => {
  const route = NFT_ROUTES.find((r) => r.operation === operation);
  if (!route) throw new Error(`MCP: no /nft route ${operation}`);
  return [route.access];
};

/** A page of at most `max` items: a tool's answer stays far under 20,000 characters. */
const page = (max: number) => ({
  limit: z.number().int().min(1).max(max).optional().describe(`Items per page (1 to ${max})`),
});

/** An amount as a route takes it (a JSON integer or a decimal string); 0 when it is neither (the route refuses it). */
const amount = (value: unknown): bigint =>
  (typeof value === "number" && Number.isSafeInteger(value) && value >= 0) ||
  (typeof value === "string" && /^\d{1,78}$/.test(value))
    ? BigInt(value)
    : 0n;

const jobAccess: AccessDeclaration[] = Object.values(SCOPE_OF_KIND).map((scope) => ({ scope, key: "always" }));

/**
 * The tools, by intent (API.md, "MCP"). Adding one is one entry here: its input, its scope and its
 * checks come from the route it names. set_base_uri and reveal join once their routes
 * (POST /nft/setBaseURI, POST /collections/{address}/reveal) are registered:
 * `{ name: "reveal", route: "reveal", access: …, write: { by: "dryRun" } }`.
 */
export const TOOLS: ToolSpec[] = [
  {
    name: "get_collection",
    title: "Get a collection",
    description:
      "An indexed collection: name, symbol, totalSupply, maxSupply, paymentToken (absent: priced in the native coin), holders, and the block the index reflects; an ERC-1155 edition contract shows its standard and editions (an edition's maxSupply: get_token).",
    route: "getCollection",
    access: [READ_ACCESS],
  },
  {
    name: "list_holders",
    title: "List holders",
    description:
      "Holders of a collection and how many tokens each holds, most first; paged with cursor. On an ERC-1155 edition contract, amounts (tokenId: one edition's holders).",
    route: "listCollectionOwners",
    access: [READ_ACCESS],
    extend: page(100),
  },
  {
    name: "get_token",
    title: "Get a token",
    description:
      "A token's owner, block minted and transfers (oldest first, paged with cursor); on an ERC-1155 edition contract, the edition's supply, maxSupply and holders with amounts.",
    route: "getCollectionToken",
    access: [READ_ACCESS],
    extend: page(50),
  },
  {
    name: "get_holdings",
    title: "Tokens of an owner",
    description:
      "The token ids an address (or a held wallet's label, such as a write's `from`) holds in a collection, with amounts on an ERC-1155 edition contract; paged with cursor.",
    route: "getCollectionWallet",
    access: [READ_ACCESS],
    extend: page(500),
  },
  {
    name: "get_operation",
    title: "Get an operation",
    description:
      "Where a write stands: status (awaiting_approval while a person decides on it), transactions, result or error (an operationId from a write tool).",
    route: "getOperation",
    access: [OPERATION_ACCESS],
  },
  {
    name: "list_operations",
    title: "List operations",
    description: "Operations this key could have made, newest first; filter by status, wallet, collection; paged.",
    route: "listOperations",
    access: [LIST_ACCESS],
    collectionField: "collection",
    extend: page(20),
  },
  {
    name: "get_wallet",
    title: "Get a wallet",
    description: "A wallet the service holds: label, balance (wei), next nonce, unfinished operations, policy.",
    route: "getWallet",
    access: [WALLET_READ_ONE],
  },
  {
    name: "list_wallets",
    title: "List wallets",
    description: "The wallets the service holds that this key may use (`from` of the write tools); paged.",
    route: "listWallets",
    access: [WALLET_READ],
    extend: page(50),
  },
  {
    name: "get_job",
    title: "Get a job",
    description:
      "A job's status (awaiting_approval, running, paused, completed, failed, cancelled), rows by state and batches.",
    route: "getJob",
    access: [JOB_READ],
  },
  {
    name: "list_jobs",
    title: "List jobs",
    description: "Jobs this key may see, newest first; paged.",
    route: "listJobs",
    access: [JOB_READ],
    extend: page(50),
  },
  {
    name: "deploy_collection",
    title: "Deploy a collection",
    description:
      'Deploy a new reference ERC-721 collection owned by the wallet `from`; with standard "erc1155", an ERC-1155 edition contract (then create_edition). paymentToken (an ERC-20 address) prices it in that token from the start (cost in its smallest unit).',
    route: "deploy",
    access: nftAccess("deploy"),
    write: { by: "dryRun" },
    omit: ["contractAddress"],
  },
  {
    name: "create_edition",
    title: "Create an edition",
    description:
      "Create the next edition (token id) of an ERC-1155 edition contract: its price in wei, maxSupply (0 = open) and the most one mint may take; owner only. The answer's tokenId names it in the other tools.",
    route: "createEdition",
    access: nftAccess("createEdition"),
    write: { by: "dryRun" },
  },
  {
    name: "mint_for_free",
    title: "Mint for free",
    description:
      "Mint tokens at no cost to `receiver` (default: `from`); owner only, works while paused. On an ERC-1155 edition contract, tokenId names the edition and mintAmount is how many of it.",
    route: "mintForFree",
    access: nftAccess("mintForFree"),
    write: { by: "dryRun", mints: (args) => amount(args.mintAmount) },
  },
  {
    name: "airdrop",
    title: "Airdrop",
    description:
      "Mint to many recipients in one transaction (owner only); on an ERC-1155 edition contract, tokenId names the edition. A list too large for one transaction becomes a job: follow it with get_job.",
    route: "airdrop",
    access: nftAccess("airdrop"),
    write: {
      by: "dryRun",
      tooLargeAsJob: true,
      mints: (args) =>
        Array.isArray(args.recipients)
          ? args.recipients.reduce<bigint>((sum, r) => sum + amount((r as { amount?: unknown } | null)?.amount), 0n)
          : 0n,
    },
  },
  {
    name: "whitelist",
    title: "Whitelist addresses",
    description: "Add addresses to the collection's whitelist in one transaction; those already listed are left out.",
    route: "addToWhitelist",
    access: nftAccess("addToWhitelist"),
    write: { by: "dryRun" },
  },
  {
    name: "set_allowlist",
    title: "Set the allowlist",
    description: "Set the collection's allowlist (address, allowance, price per entry): its Merkle root goes on chain.",
    route: "setAllowlist",
    access: nftAccess("setAllowlist"),
    write: { by: "dryRun" },
  },
  {
    name: "create_voucher",
    title: "Sign a mint voucher",
    description:
      "Sign an EIP-712 mint voucher for a buyer, who redeems it and pays; `from` must be the collection's voucher signer. No transaction.",
    route: "createVoucher",
    access: nftAccess("createVoucher"),
    write: { by: "none" },
  },
  {
    name: "set_paused",
    title: "Pause or resume minting",
    description:
      "Pause (state true) or resume (false) public minting; owner only. On an ERC-1155 edition contract, with tokenId: that edition only. No transaction when unchanged.",
    route: "setPaused",
    access: nftAccess("setPaused"),
    write: { by: "dryRun" },
  },
  {
    name: "set_cost",
    title: "Set the price",
    description:
      "Set the price of one token in wei (of the edition tokenId on an ERC-1155 edition contract); owner only. No transaction when unchanged.",
    route: "setCost",
    access: nftAccess("setCost"),
    write: { by: "dryRun" },
  },
  {
    name: "checkout",
    title: "Checkout: the permit a buyer signs",
    description:
      "For a collection priced in an ERC-20: the EIP-712 typed data (domain, types, primaryType, message) of the EIP-2612 permit `buyer` signs with eth_signTypedData_v4 to pay cost × mintAmount; then mint_with_permit. No transaction.",
    route: "checkout",
    access: nftAccess("checkout"),
  },
  {
    name: "mint_with_permit",
    title: "Mint with a buyer's permit",
    description:
      "Mint to `buyer`, who pays the token price with the permit signature from checkout (same mintAmount and deadline); the wallet `from` sends it and pays only the gas. On an ERC-1155 edition contract, tokenId names the edition.",
    route: "mintWithPermit",
    access: nftAccess("mintWithPermit"),
    write: { by: "dryRun", mints: (args) => amount(args.mintAmount) },
  },
  {
    name: "set_base_uri",
    title: "Set the base URI",
    description:
      "Set the collection's base URI (tokenURI = baseURI + id); owner only. Emits ERC-4906 BatchMetadataUpdate so marketplaces refresh.",
    route: "setBaseURI",
    access: nftAccess("setBaseURI"),
    write: { by: "dryRun" },
  },
  {
    name: "reveal",
    title: "Reveal the collection",
    description:
      "Send the contract's reveal() once the commit's revealBlock is mined (409 REVEAL_TOO_EARLY before): fixes the starting index from that block's hash; once.",
    route: "reveal",
    access: nftAccess("reveal"),
    write: { by: "dryRun" },
  },
  {
    name: "create_job",
    title: "Start a job",
    description:
      "An airdrop or whitelist of any size (up to 100,000 rows), sent in batches by the wallet `from`; follow it with get_job. A job this key's approval rule holds waits (awaiting_approval) until a person approves it.",
    route: "createJob",
    access: jobAccess,
    write: { by: "jobDryRun" },
    omit: ["dryRun"],
  },
  {
    name: "cancel_job",
    title: "Cancel a job",
    description: "Cancel a job: batches not yet sent are never sent; those sent are followed to their end.",
    route: "cancelJob",
    access: jobAccess,
    write: { by: "read", route: "getJob" },
  },
];

/** The scopes that show a tool in tools/list (any one of them). */
export const toolScopes = (tool: ToolSpec): Scope[] =>
  tool.access.map((declaration) => declaration.scope).filter((scope): scope is Scope => scope !== undefined);
