/**
 * What the MCP tests share: a node, a service holding a wallet ("treasury") that owns a collection,
 * and the SDK's own clients of both lines (2.x: @modelcontextprotocol/client; 1.x:
 * @modelcontextprotocol/sdk) connected to /mcp with a key.
 */
import { Client } from "@modelcontextprotocol/client";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { Client as Client1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as Transport1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { expect } from "chai";
import { Wallet, type JsonRpcProvider } from "ethers";
import {
  ApiClient,
  ChainNode,
  collectionAt,
  deployDirectly,
  DEV_KEYS,
  directProvider,
  ServiceProcess,
  type JsonBody,
} from "../api/harness";
import { transferOwnership } from "../jobs/fixture";
import { fund, KeyedClient, newMasterKey } from "../wallets/fixture";

export interface McpWorld {
  node: ChainNode;
  provider: JsonRpcProvider;
  service: ServiceProcess;
  root: KeyedClient;
  treasury: JsonBody;
  /** Owned by the treasury wallet. */
  collection: string;
  supply(): Promise<bigint>;
  stop(): Promise<void>;
}

export async function startWorld(env: Record<string, string> = {}): Promise<McpWorld> {
  const node = await ChainNode.start();
  const provider = directProvider(node.rpcUrl);
  const deployer = new Wallet(DEV_KEYS[0], provider);
  const collection = await deployDirectly(deployer, { maxSupply: 100_000n });
  const service = await ServiceProcess.start({
    rpcUrl: node.rpcUrl,
    env: { WALLET_MASTER_KEY: newMasterKey(), BLOCK_POLL_MS: "100", LOG_LEVEL: "warn", ...env },
  });
  const root = new KeyedClient(new ApiClient(service.url));
  const treasury = await root.createWallet({ kind: "local", label: "treasury" });
  await fund(provider, treasury.address as string, 10_000n * 10n ** 18n);
  await transferOwnership(deployer, collection, treasury.address as string);
  const registered = await root.post("/collections", { address: collection, fromBlock: 0 });
  expect(registered.status, registered.text).to.be.oneOf([200, 201]);
  return {
    node,
    provider,
    service,
    root,
    treasury,
    collection,
    supply: async () => (await collectionAt(collection, provider).totalSupply()) as bigint,
    stop: async () => {
      provider.destroy();
      await service.stop();
      await node.stop();
    },
  };
}

/** A 2.x client on `/mcp` with `key` as its Bearer. */
export async function client2(baseUrl: string, key: string): Promise<Client> {
  const client = new Client({ name: "mcp-test-2x", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${key}` } },
    }),
  );
  return client;
}

/** A 1.x client (@modelcontextprotocol/sdk 1.32) on `/mcp` with `key` as its Bearer. */
export async function client1(baseUrl: string, key: string): Promise<Client1> {
  const client = new Client1({ name: "mcp-test-1x", version: "1.0.0" });
  await client.connect(
    new Transport1(new URL(`${baseUrl}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${key}` } } }),
  );
  return client;
}

interface ToolResult {
  isError?: boolean;
  structuredContent?: Record<string, unknown>;
  content?: unknown;
}

/** A tool result that is no error: its structured content. */
export function structured(answer: unknown): JsonBody {
  const result = answer as ToolResult;
  expect(result.isError ?? false, JSON.stringify(result.content)).to.equal(false);
  expect(result.structuredContent).to.be.an("object");
  return result.structuredContent as JsonBody;
}

/** A tool result that is an error: its { code, message }. */
export function toolError(answer: unknown): { code: string; message: string } {
  const result = answer as ToolResult;
  expect(result.isError, JSON.stringify(result)).to.equal(true);
  const [first] = result.content as { type: string; text: string }[];
  return (JSON.parse(first.text) as { error: { code: string; message: string } }).error;
}
