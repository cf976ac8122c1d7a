import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import path from "node:path";

const ROOT = path.resolve(__dirname, "..");
const HARDHAT = path.join(ROOT, "node_modules", ".bin", "hardhat");

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** A child process that is killed when this process exits. */
function spawnChild(args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  const child = spawn(HARDHAT, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  process.once("exit", () => child.kill("SIGKILL"));
  return child;
}

function waitForOutput(child: ChildProcess, pattern: RegExp, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let seen = "";
    const timer = setTimeout(() => reject(new Error(`timed out waiting for ${pattern}; output so far:\n${seen}`)), timeoutMs);
    const onData = (chunk: Buffer) => {
      seen += chunk.toString();
      const match = pattern.exec(seen);
      if (match) {
        clearTimeout(timer);
        child.stdout?.off("data", onData);
        resolve(match[0]);
      }
    };
    child.stdout?.on("data", onData);
    child.once("exit", (code) => reject(new Error(`exited with ${code} before ${pattern}:\n${seen}`)));
  });
}

/** `hardhat node` on a free port. */
export async function startHardhatNode(): Promise<{ rpcUrl: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawnChild(["node", "--port", String(port)], {});
  await waitForOutput(child, /Started HTTP and WebSocket JSON-RPC server/, 60_000);
  child.stdout?.resume();
  return { rpcUrl: `http://127.0.0.1:${port}`, child };
}

/** The service as `npm start` runs it, connected to `rpcUrl`; logs are drained, not kept. */
export async function startServiceProcess(env: NodeJS.ProcessEnv): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawnChild(["run", "scripts/start.ts"], { PORT: String(port), HOST: "127.0.0.1", ...env });
  child.stderr?.resume();
  await waitForOutput(child, /NFT contract operations service/, 120_000);
  child.stdout?.resume();
  return { url: `http://127.0.0.1:${port}`, child };
}
