import { z } from "zod";
import { common, decimal, nftBody } from "./fields";
import { defineRead } from "./route";

export const totalSupplyRoute = defineRead({
  path: "/nft/total-supply",
  operation: "totalSupply",
  access: { scope: "nft:read", key: "open", bodyCollection: "contractAddress" },
  summary: "Total and maximum supply, and the caller's wallet (WalletOfOwner)",
  description: "A read: no transaction is sent. `wallet` lists the tokens the caller's address holds.",
  body: nftBody(common).openapi("TotalSupplyRequest"),
  response: z
    .object({
      totalSupply: decimal,
      maxSupply: decimal,
      wallet: z.object({ address: z.string(), tokenIds: z.array(decimal) }),
    })
    .openapi("TotalSupplyResponse"),
  errors: ["CONTRACT_NOT_FOUND", "UNSUPPORTED_CONTRACT"],
  async handle(input, { chain, caller }) {
    const at = input.contractAddress;
    const [totalSupply, maxSupply, tokenIds] = await chain.read(at, () =>
      Promise.all([
        chain.view(at, "totalSupply", []),
        chain.view(at, "maxSupply", []),
        chain.view(at, "walletOfOwner", [caller.address]),
      ]),
    );
    return {
      totalSupply: totalSupply.toString(),
      maxSupply: maxSupply.toString(),
      wallet: { address: caller.address, tokenIds: tokenIds.map(String) },
    };
  },
});
