import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { McpServer, type CallToolResult } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { passThrough, type JsonObjectSchema } from "./schemas";

/**
 * `npx nft-ops mcp`: the service's MCP tools over stdio, for desktop clients. It serves exactly
 * what `NFT_OPS_URL`/mcp lists for `NFT_OPS_KEY` and forwards each call there, so the tools, their
 * plan tokens, access checks, audit events and `via: "mcp"` are the service's own, in one place.
 * Resolves when the client closes stdin.
 */
export async function serveMcpStdio(env: NodeJS.ProcessEnv, complain: (text: string) => void): Promise<number> {
  const key = env.NFT_OPS_KEY;
  if (!key) {
    complain("nft-ops mcp: NFT_OPS_KEY (an access key) is required");
    return 2;
  }
  const base = env.NFT_OPS_URL ?? "http://127.0.0.1:3000";
  const remote = new Client({ name: "nft-ops-stdio", version: "0.1.0" });
  try {
    await remote.connect(
      new StreamableHTTPClientTransport(new URL("/mcp", base), {
        requestInit: { headers: { Authorization: `Bearer ${key}` } },
      }),
    );
  } catch (err) {
    complain(`nft-ops mcp: cannot reach ${base}/mcp: ${(err as Error).message}`);
    return 1;
  }
  const { tools } = await remote.listTools();
  const closed = new Promise<void>((resolve) => process.stdin.once("end", resolve).once("close", resolve));
  const handle = serveStdio(() => {
    const server = new McpServer({ name: "nft-ops", version: "0.1.0" }, { instructions: remote.getInstructions() });
    for (const tool of tools) {
      server.registerTool(
        tool.name,
        {
          title: tool.title,
          description: tool.description,
          inputSchema: passThrough(tool.inputSchema as JsonObjectSchema),
          ...(tool.outputSchema ? { outputSchema: passThrough(tool.outputSchema as JsonObjectSchema) } : {}),
          annotations: tool.annotations,
        },
        async (args) => (await remote.callTool({ name: tool.name, arguments: args })) as CallToolResult,
      );
    }
    return server;
  });
  await closed;
  await handle.close();
  await remote.close();
  return 0;
}
