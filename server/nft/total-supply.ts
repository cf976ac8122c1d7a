import { z } from "zod";
import { common, decimal } from "./fields";
import { defineRead } from "./route";

export const totalSupplyRoute = defineRead({
  path: "/nft/total-supply",
  operation: "totalSupply",
  summary: "Total and maximum supply, and the caller's wallet (WalletOfOwner)",
  description: "A read: no transaction is sent. `wallet` lists the tokens the caller's address holds.",
  body: z.object(common).openapi("TotalSupplyRequest"),
  response: z
    .object({
      totalSupply: decimal,
      maxSupply: decimal,
      wallet: z.object({ address: z.string(), tokenIds: z.array(decimal) }),
    })
    .openapi("TotalSupplyResponse"),
  errors: ["CONTRACT_NOT_FOUND", "UNSUPPORTED_CONTRACT"],
  async handle(input, { chain }) {
    const signer = chain.signers.get(input.privateKey);
    const at = input.contractAddress;
    const [totalSupply, maxSupply, tokenIds] = await chain.read(at, () =>
      Promise.all([
        chain.view(at, "totalSupply", []),
        chain.view(at, "maxSupply", []),
        chain.view(at, "walletOfOwner", [signer.address]),
      ]),
    );
    return {
      totalSupply: totalSupply.toString(),
      maxSupply: maxSupply.toString(),
      wallet: { address: signer.address, tokenIds: tokenIds.map(String) },
    };
  },
});
