import { existsSync, readFileSync } from "node:fs";
import type { InterfaceAbi } from "ethers";

/** A compiled contract: what deploying it and calling it need. */
export interface Artifact {
  abi: InterfaceAbi;
  bytecode: string;
}

/**
 * A contract's artifact, read once: the copy `npm run build` writes beside the compiled module
 * (production output, which has no `artifacts/`), else Hardhat's compilation output.
 */
export function artifactLoader(builtInPath: string, hardhatPath: string) {
  let artifact: Artifact | undefined;
  const file = () => (existsSync(builtInPath) ? builtInPath : hardhatPath);
  return {
    available: () => existsSync(file()),
    load(): Artifact {
      if (!artifact) {
        const at = file();
        try {
          artifact = JSON.parse(readFileSync(at, "utf8")) as Artifact;
        } catch {
          throw new Error(`Contract artifact missing at ${at}: run \`npm run compile\``);
        }
      }
      return artifact;
    },
  };
}
