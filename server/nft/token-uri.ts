import { z } from "zod";
import { common, decimal, uint } from "./fields";
import { defineRead } from "./route";

export const tokenUriRoute = defineRead({
  path: "/nft/tokenURI",
  operation: "tokenURI",
  summary: "Look up the URI of a token",
  description: "A read: no transaction is sent.",
  body: z.object({ ...common, tokenId: uint("tokenId") }).openapi("TokenUriRequest"),
  response: z.object({ tokenId: decimal, tokenURI: z.string() }).openapi("TokenUriResponse"),
  errors: ["CONTRACT_NOT_FOUND", "TOKEN_NOT_FOUND", "UNSUPPORTED_CONTRACT"],
  async handle(input, { chain }) {
    chain.signers.get(input.privateKey); // a read still needs a valid key: it names the caller (400 otherwise)
    const tokenURI: string = await chain.read(input.contractAddress, () =>
      chain.view(input.contractAddress, "tokenURI", [input.tokenId]),
    );
    return { tokenId: input.tokenId.toString(), tokenURI };
  },
});
