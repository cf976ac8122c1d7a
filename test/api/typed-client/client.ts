/**
 * A client program written against types generated from the service's own /openapi.json
 * (openapi-typescript writes generated/nft-api.ts at test time) and calling it with
 * openapi-fetch. typed-client.test.ts type-checks this file with tsc before it runs it: a field
 * the document misnames or mistypes, or an operation it leaves out, fails the check.
 */
import createClient, { type Client } from "openapi-fetch";
import type { paths } from "./generated/nft-api";
import type { TypedCall, TypedClientOptions } from "./run";

/** The typed client on the service, and `record`, which keeps each answer's operation, status and body in `calls`. */
function recordingClient(options: TypedClientOptions) {
  const client = createClient<paths>({ baseUrl: options.baseUrl });
  const calls: TypedCall[] = [];
  const record = <T extends { response: Response; data?: unknown; error?: unknown }>(operation: string, answer: T) => {
    calls.push({ operation, status: answer.response.status, body: answer.data ?? answer.error });
    return answer;
  };
  return { client, calls, record };
}

export async function driveEveryNftOperation(options: TypedClientOptions): Promise<TypedCall[]> {
  const { client, calls, record } = recordingClient(options);
  const { privateKey, receiver } = options;

  // Numbers as the document allows them: JSON integers and decimal strings.
  const deployed = record(
    "deploy",
    await client.POST("/nft/deploy", {
      body: { privateKey, name: "Typed", symbol: "TYP", cost: 1000, maxSupply: "100", maxMintAmountPerTx: 5 },
    }),
  );
  if (deployed.data?.status !== "confirmed") return calls;
  const contractAddress: string = deployed.data.contractAddress;
  const common = { privateKey, contractAddress };

  const minted = record(
    "mint",
    await client.POST("/nft/mint", {
      params: { header: { "idempotency-key": `typed-client-${contractAddress}` } },
      body: { ...common, mintAmount: 2 },
    }),
  );
  // A 202 (pending) is a success too: the types make the caller tell them apart. An edition's mint
  // (ERC-1155) answers tokenId and amount instead of tokenIds: the types say tokenIds may be absent.
  const tokenIds: string[] = minted.data?.status === "confirmed" ? (minted.data.tokenIds ?? []) : [];
  const paid: string | undefined = minted.data?.status === "confirmed" ? minted.data.value : undefined;
  void paid;

  record("mintForFree", await client.POST("/nft/mintForFree", { body: { ...common, mintAmount: "1", receiver } }));
  record(
    "addUserAddressToWhitelist",
    await client.POST("/nft/addUserAddressToWhitelist", { body: { ...common, address: receiver } }),
  );
  const paused = record("setPaused", await client.POST("/nft/setPaused", { body: { ...common, state: true } }));
  const isPaused: boolean | undefined = paused.data && "paused" in paused.data ? paused.data.paused : undefined;
  void isPaused;
  record("setPaused", await client.POST("/nft/setPaused", { body: { ...common, state: "false" } }));
  record("setCost", await client.POST("/nft/setCost", { body: { ...common, cost: "2000" } }));

  const uri = record("tokenURI", await client.POST("/nft/tokenURI", { body: { ...common, tokenId: tokenIds[0] } }));
  const tokenURI: string | undefined = uri.data?.tokenURI;
  void tokenURI;
  const supply = record("totalSupply", await client.POST("/nft/total-supply", { body: common }));
  const held: string[] | undefined = supply.data?.wallet.tokenIds;
  void held;

  record("withdraw", await client.POST("/nft/withdraw", { headers: { API_KEY: options.apiKey }, body: common }));

  // A dry run's plan (status "planned") has no operation to follow.
  if (minted.data && minted.data.status !== "planned") {
    const operation = record(
      "getOperation",
      await client.GET("/nft/operations/{operationId}", {
        params: { path: { operationId: minted.data.operationId } },
      }),
    );
    const status: "queued" | "sent" | "confirmed" | "failed" | "awaiting_approval" | undefined = operation.data?.status;
    void status;
  }
  return calls;
}

/**
 * The same client on an ERC-1155 edition contract: deploy with standard erc1155, createEdition, then
 * the seed's operations with the edition's tokenId, each answer read through its generated type.
 */
export async function driveEditions(options: TypedClientOptions): Promise<TypedCall[]> {
  const { client, calls, record } = recordingClient(options);
  const { privateKey, receiver } = options;

  const deployed = record(
    "deploy",
    await client.POST("/nft/deploy", {
      body: { privateKey, standard: "erc1155", name: "Typed Editions", symbol: "TYPE", baseURI: "ipfs://typed/" },
    }),
  );
  if (deployed.data?.status !== "confirmed") return calls;
  const common = { privateKey, contractAddress: deployed.data.contractAddress };

  const created = record(
    "createEdition",
    await client.POST("/nft/createEdition", {
      body: { ...common, cost: 1000, maxSupply: "50", maxMintAmountPerTx: 5 },
    }),
  );
  if (created.data?.status !== "confirmed") return calls;
  const tokenId: string = created.data.tokenId;
  const edition = { ...common, tokenId };

  const minted = record("mint", await client.POST("/nft/mint", { body: { ...edition, mintAmount: 2 } }));
  const amount: string | undefined = minted.data?.status === "confirmed" ? minted.data.amount : undefined;
  void amount;
  record("mintForFree", await client.POST("/nft/mintForFree", { body: { ...edition, mintAmount: "1", receiver } }));
  const dropped = record(
    "airdrop",
    await client.POST("/nft/airdrop", { body: { ...edition, recipients: [{ address: receiver, amount: 2 }] } }),
  );
  const received: string | undefined =
    dropped.data?.status === "confirmed" ? dropped.data.recipients[0]?.amount : undefined;
  void received;
  record("setCost", await client.POST("/nft/setCost", { body: { ...edition, cost: "2000" } }));
  record("setPaused", await client.POST("/nft/setPaused", { body: { ...edition, state: true } }));
  record("setPaused", await client.POST("/nft/setPaused", { body: { ...edition, state: false } }));
  record("tokenURI", await client.POST("/nft/tokenURI", { body: edition }));
  const supply = record("totalSupply", await client.POST("/nft/total-supply", { body: edition }));
  const balances: Record<string, string> | undefined = supply.data?.wallet.balances;
  void balances;
  return calls;
}

/** Never called: calls the generated types must refuse, each checked by tsc (an unused expect-error fails it). */
export function refusedByTheTypes(client: Client<paths>): void {
  const common = { privateKey: "0x…", contractAddress: "0x…" };
  // @ts-expect-error mintAmount is required
  void client.POST("/nft/mint", { body: common });
  // @ts-expect-error mintAmount is an integer or a decimal string, not a boolean
  void client.POST("/nft/mint", { body: { ...common, mintAmount: true } });
  // @ts-expect-error state is a boolean or "true"/"false"
  void client.POST("/nft/setPaused", { body: { ...common, state: "yes" } });
  // @ts-expect-error from (a held wallet, instead of privateKey) is an address or a label, not a number
  void client.POST("/nft/total-supply", { body: { contractAddress: "0x…", from: 1 } });
  // @ts-expect-error contractAddress is required (privateKey and from are each optional in the types: exactly one is checked by the service)
  void client.POST("/nft/total-supply", { body: { privateKey: "0x…" } });
  // @ts-expect-error no such operation
  void client.POST("/nft/burn", { body: common });
  // @ts-expect-error createEdition needs maxSupply (0 for an open edition)
  void client.POST("/nft/createEdition", { body: { ...common, cost: 0, maxMintAmountPerTx: 1 } });
  // @ts-expect-error the standard is erc721 or erc1155
  void client.POST("/nft/deploy", { body: { privateKey: "0x…", standard: "erc20" } });
  // @ts-expect-error the operations route is a GET with a path parameter
  void client.POST("/nft/operations/{operationId}", { params: { path: { operationId: "x" } } });
}
