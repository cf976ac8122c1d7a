import type { ChainClient } from "../chain/chain-client";
import { RevertError } from "../chain/chain-errors";

/**
 * A revert met by a request on `contractAddress`, in words that name the collection and, for a
 * cap, say its size (one read): "Only 3 of 100 tokens are left". Anything else is left as it is.
 * A read that fails keeps the words the revert alone gives: the caller's error is the revert.
 */
export async function inContractWords(
  err: unknown,
  input: Record<string, unknown>,
  chain: ChainClient,
): Promise<unknown> {
  if (!(err instanceof RevertError) || typeof input.contractAddress !== "string") return err;
  const contract = input.contractAddress;
  const standard = await chain.standardOf(contract).catch(() => undefined);
  let maxSupply: bigint | undefined;
  if (err.revert.name === "MaxSupplyExceeded") {
    const tokenId = typeof input.tokenId === "bigint" ? input.tokenId : undefined;
    maxSupply = await (
      standard === "erc1155" && tokenId !== undefined
        ? chain.viewEdition(contract, "edition", [tokenId]).then((edition) => edition[1])
        : chain.view(contract, "maxSupply", [])
    ).catch(() => undefined);
  }
  return err.withContext({ contract, standard, maxSupply });
}
