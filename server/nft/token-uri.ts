import { z } from "zod";
import { common, decimal, uint, nftBody } from "./fields";
import { defineRead } from "./route";

export const tokenUriRoute = defineRead({
  path: "/nft/tokenURI",
  operation: "tokenURI",
  access: { scope: "nft:read", key: "open", bodyCollection: "contractAddress" },
  summary: "Look up the URI of a token",
  description:
    "A read: no transaction is sent. On an ERC-1155 editions contract, tokenId is the edition and the answer is its uri(id).",
  body: nftBody({ ...common, tokenId: uint("tokenId") }).openapi("TokenUriRequest"),
  response: z.object({ tokenId: decimal, tokenURI: z.string() }).openapi("TokenUriResponse"),
  errors: ["CONTRACT_NOT_FOUND", "TOKEN_NOT_FOUND", "UNSUPPORTED_CONTRACT"],
  async handle(input, { chain, metadata }) {
    const at = input.contractAddress;
    const edition = (await chain.standardOf(at)) === "erc1155";
    const read = () =>
      chain.read(at, () =>
        edition ? chain.viewEdition(at, "uri", [input.tokenId]) : chain.view(at, "tokenURI", [input.tokenId]),
      );
    // Kept in memory until the collection's metadata changes (ERC-4906), or for one block (server/metadata).
    const tokenURI: string = metadata
      ? await metadata.tokenUris.tokenURI(input.contractAddress, input.tokenId, read)
      : await read();
    return { tokenId: input.tokenId.toString(), tokenURI };
  },
});
