/**
 * Issue 57: editions run "with the same routes, rules and guarantees" as ERC-721 (API.md,
 * "Editions"). This walks the OpenAPI document: every operation that acts on a collection (a body
 * with contractAddress, or a path with {address}) is called against a live NFTEditions contract
 * with one edition, with a minimal body (writes as ?dryRun=true, so the walk sends nothing). None
 * may answer 5xx, nor 422 UNSUPPORTED_CONTRACT (the route would not know editions exist). Each
 * answers its success, a 400 naming a field (tokenId; the standard for the ERC-721-only routes
 * listed below, each with why), or another status it documents. A new route that acts on a
 * collection fails this file until it is given a call here.
 */
import { expect } from "chai";
import { Wallet } from "ethers";
import { openApiDocuments } from "../../../server/openapi/documents";
import { eventually } from "../../runtime/processes";
import { operationsOf } from "../../support/openapi-checks";
import { TEST_API_KEY, type ApiResponse } from "../harness";
import { describeSecrets, nftFixture } from "../nft/fixture";

type Json = Record<string, unknown>;

const ROOT = { Authorization: `Bearer ${TEST_API_KEY}` };
const VOUCHER_ID = `0x${"ab".repeat(32)}`;

const ALLOWLISTS = "allowlists are ERC-721 only in this version (API.md, Editions: Jobs and drops)";
const VOUCHERS = "vouchers are ERC-721 only in this version (API.md, Editions: Jobs and drops)";
const NO_REVEAL = "an edition's metadata is per id, with no reveal (API.md, Editions: Metadata)";

/** Routes refused on an edition contract, by "METHOD path", with why: a 400 naming the standard (the reveal: 409, API.md "Editions"). */
const ERC721_ONLY: Record<string, string> = {
  "POST /nft/allowlistMint": ALLOWLISTS,
  "PUT /collections/{address}/allowlist": ALLOWLISTS,
  "GET /collections/{address}/allowlist": ALLOWLISTS,
  "GET /collections/{address}/allowlist/{account}": ALLOWLISTS,
  "POST /nft/mintWithVoucher": VOUCHERS,
  "POST /collections/{address}/vouchers": VOUCHERS,
  "GET /collections/{address}/vouchers/{id}": VOUCHERS,
  "POST /collections/{address}/metadata/commit": NO_REVEAL,
  "POST /collections/{address}/reveal": NO_REVEAL,
};

/** Routes whose success the shared service cannot give, with why: only "not 5xx" is asserted here. */
const NOT_5XX_ONLY: Record<string, string> = {
  "POST /nft/checkout":
    "the walk's edition is priced in the native coin (400 naming paymentToken): test/api/nft/checkout.test.ts buys an edition by permit",
  "POST /nft/mintWithPermit":
    "the walk's edition is priced in the native coin, and a permit needs the buyer's signature: test/api/nft/checkout.test.ts",
  "POST /jobs":
    "a job sends from a held wallet, which the shared service has none of: test/jobs/editions.test.ts runs edition jobs",
};

const WALLET = "{address} is a held wallet's, not a collection's";

/** Routes the walk's selection takes in that act on no collection, with why. */
const NOT_A_COLLECTION: Record<string, string> = {
  "GET /wallets/{address}": WALLET,
  "PATCH /wallets/{address}": WALLET,
  "DELETE /wallets/{address}": WALLET,
};

/** Where `tokenId` may be left out on an edition contract, with why (every other body taking it needs it there). */
const TOKEN_ID_OPTIONAL: Record<string, string> = {
  "POST /nft/setPaused": "without tokenId it pauses the whole contract (API.md, Editions)",
};

interface Walk {
  editions: string;
  tokenId: string;
  chainId: string;
  owner: Wallet;
  minter: Wallet;
}

/** One request: `path` with its parameters filled in, and the body (without it for a GET). */
interface Call {
  path: string;
  body?: Json;
}

/** Each route's minimal call on the file's edition contract (writes as ?dryRun=true: nothing is sent). */
const CALLS: Record<string, (w: Walk) => Call> = {
  "POST /nft/tokenURI": (w) => ({ path: "/nft/tokenURI", body: { ...by(w.minter, w), tokenId: w.tokenId } }),
  "POST /nft/total-supply": (w) => ({ path: "/nft/total-supply", body: { ...by(w.minter, w), tokenId: w.tokenId } }),
  "POST /nft/mint": (w) => ({
    path: "/nft/mint?dryRun=true",
    body: { ...by(w.minter, w), tokenId: w.tokenId, mintAmount: 1 },
  }),
  "POST /nft/mintForFree": (w) => ({
    path: "/nft/mintForFree?dryRun=true",
    body: { ...by(w.owner, w), tokenId: w.tokenId, mintAmount: 1, receiver: w.minter.address },
  }),
  "POST /nft/airdrop": (w) => ({
    path: "/nft/airdrop?dryRun=true",
    body: { ...by(w.owner, w), tokenId: w.tokenId, recipients: [{ address: w.minter.address, amount: 1 }] },
  }),
  "POST /nft/setCost": (w) => ({
    path: "/nft/setCost?dryRun=true",
    body: { ...by(w.owner, w), tokenId: w.tokenId, cost: "5" },
  }),
  "POST /nft/setPaused": (w) => ({
    path: "/nft/setPaused?dryRun=true",
    body: { ...by(w.owner, w), tokenId: w.tokenId, state: true },
  }),
  "POST /nft/addUserAddressToWhitelist": (w) => ({
    path: "/nft/addUserAddressToWhitelist?dryRun=true",
    body: { ...by(w.owner, w), address: w.minter.address },
  }),
  "POST /nft/addToWhitelist": (w) => ({
    path: "/nft/addToWhitelist?dryRun=true",
    body: { ...by(w.owner, w), addresses: [w.minter.address] },
  }),
  "POST /nft/withdraw": (w) => ({ path: "/nft/withdraw?dryRun=true", body: by(w.owner, w) }),
  "POST /nft/setRoyalty": (w) => ({
    path: "/nft/setRoyalty?dryRun=true",
    body: { ...by(w.owner, w), receiver: w.minter.address, bps: 250 },
  }),
  "POST /nft/setBaseURI": (w) => ({
    path: "/nft/setBaseURI?dryRun=true",
    body: { ...by(w.owner, w), baseURI: "https://example.test/walk/" },
  }),
  "POST /nft/createEdition": (w) => ({
    path: "/nft/createEdition?dryRun=true",
    body: { ...by(w.owner, w), cost: "1", maxSupply: 10, maxMintAmountPerTx: 2 },
  }),
  "POST /nft/setPaymentToken": (w) => ({
    path: "/nft/setPaymentToken?dryRun=true",
    body: { ...by(w.owner, w), paymentToken: "0x0000000000000000000000000000000000000000" },
  }),
  "POST /nft/checkout": (w) => ({
    path: "/nft/checkout",
    body: { contractAddress: w.editions, tokenId: w.tokenId, buyer: w.minter.address, mintAmount: 1 },
  }),
  "POST /nft/mintWithPermit": (w) => ({
    path: "/nft/mintWithPermit?dryRun=true",
    body: {
      ...by(w.owner, w),
      tokenId: w.tokenId,
      buyer: w.minter.address,
      mintAmount: 1,
      deadline: "9999999999",
      signature: `0x${"11".repeat(65)}`,
    },
  }),
  // contractAddress is ignored by deploy: the dry run plans a new edition contract.
  "POST /nft/deploy": (w) => ({ path: "/nft/deploy?dryRun=true", body: { ...by(w.owner, w), standard: "erc1155" } }),
  "POST /nft/allowlistMint": (w) => ({
    path: "/nft/allowlistMint?dryRun=true",
    body: { ...by(w.minter, w), mintAmount: 1 },
  }),
  "POST /nft/mintWithVoucher": (w) => ({
    path: "/nft/mintWithVoucher?dryRun=true",
    body: {
      ...by(w.minter, w),
      voucher: { to: w.minter.address, amount: "1", price: "0", validUntil: "9999999999", id: VOUCHER_ID },
      signature: `0x${"11".repeat(65)}`,
    },
  }),
  "PUT /collections/{address}/allowlist": (w) => ({
    path: `/collections/${w.editions}/allowlist?dryRun=true`,
    body: { ...by(w.owner, w), entries: [{ address: w.minter.address, allowance: "1", price: "0" }] },
  }),
  "GET /collections/{address}/allowlist": (w) => ({ path: `/collections/${w.editions}/allowlist` }),
  "GET /collections/{address}/allowlist/{account}": (w) => ({
    path: `/collections/${w.editions}/allowlist/${w.minter.address}`,
  }),
  "POST /collections/{address}/vouchers": (w) => ({
    path: `/collections/${w.editions}/vouchers`,
    body: { ...by(w.owner, w), to: w.minter.address, amount: 1, price: 0 },
  }),
  "GET /collections/{address}/vouchers/{id}": (w) => ({ path: `/collections/${w.editions}/vouchers/${VOUCHER_ID}` }),
  "POST /collections/{address}/metadata/commit": (w) => ({
    path: `/collections/${w.editions}/metadata/commit?dryRun=true`,
    body: by(w.owner, w),
  }),
  "POST /collections/{address}/reveal": (w) => ({
    path: `/collections/${w.editions}/reveal?dryRun=true`,
    body: by(w.owner, w),
  }),
  "POST /collections/{address}/metadata/host": (w) => ({
    path: `/collections/${w.editions}/metadata/host?dryRun=true`,
    body: by(w.owner, w),
  }),
  "PUT /collections/{address}/metadata": (w) => ({
    path: `/collections/${w.editions}/metadata`,
    body: { tokens: [{ tokenId: w.tokenId, name: "Walk print", image: "ipfs://bafywalk" }] },
  }),
  "GET /collections/{address}/metadata": (w) => ({ path: `/collections/${w.editions}/metadata` }),
  "GET /collections/{address}/metadata.car": (w) => ({ path: `/collections/${w.editions}/metadata.car` }),
  "GET /metadata/{chainId}/{address}/{tokenId}": (w) => ({ path: `/metadata/${w.chainId}/${w.editions}/${w.tokenId}` }),
  "GET /collections/{address}": (w) => ({ path: `/collections/${w.editions}` }),
  "GET /collections/{address}/owners": (w) => ({ path: `/collections/${w.editions}/owners` }),
  "GET /collections/{address}/tokens/{tokenId}": (w) => ({ path: `/collections/${w.editions}/tokens/${w.tokenId}` }),
  "GET /collections/{address}/wallets/{owner}": (w) => ({
    path: `/collections/${w.editions}/wallets/${w.minter.address}`,
  }),
  "POST /jobs": (w) => ({
    path: "/jobs?dryRun=true",
    body: {
      kind: "airdrop",
      contractAddress: w.editions,
      from: w.owner.address,
      recipients: [{ address: w.minter.address, amount: "1", tokenId: w.tokenId }],
    },
  }),
};

/** A body's signer and collection: the key's own privateKey and the file's edition contract. */
function by(signer: Wallet, w: Walk): Json {
  return { privateKey: signer.privateKey, contractAddress: w.editions };
}

describe("the OpenAPI document walked on an ERC-1155 edition contract (issue 57)", function () {
  const f = nftFixture({ collection: false });
  const doc = openApiDocuments().api() as Json;
  const schemas = ((doc.components as Json | undefined)?.schemas ?? {}) as Record<string, Json>;
  const resolve = (schema: unknown): Json | undefined => {
    const s = schema as Json | undefined;
    return typeof s?.$ref === "string" ? schemas[s.$ref.split("/").pop()!] : s;
  };
  /** Whether a body schema (through $ref, allOf, anyOf, oneOf) has the property `name`. */
  const bodyHas = (schema: unknown, name: string): boolean => {
    const s = resolve(schema);
    if (!s) return false;
    if (typeof s.properties === "object" && s.properties !== null && name in s.properties) return true;
    return ["allOf", "anyOf", "oneOf"].some(
      (k) => Array.isArray(s[k]) && (s[k] as unknown[]).some((x) => bodyHas(x, name)),
    );
  };
  const operationOf = (route: string): Json => {
    const [method, path] = route.split(" ");
    return ((doc.paths as Json)[path] as Json)[method.toLowerCase()] as Json;
  };
  const takes = (route: string, name: string): boolean => {
    const content = ((operationOf(route).requestBody as Json | undefined)?.content ?? {}) as Record<string, Json>;
    return Object.values(content).some((media) => bodyHas(media.schema, name));
  };
  const documentedStatuses = (route: string): string[] => Object.keys((operationOf(route).responses ?? {}) as Json);
  /** The operations that act on a collection: a body with contractAddress, or a path with {address}. */
  const onACollection = operationsOf(doc)
    .map((op) => `${op.method.toUpperCase()} ${op.path}`)
    .filter((route) => route.includes("{address}") || takes(route, "contractAddress"));

  const w = {} as Walk;
  const answers = new Map<string, ApiResponse>();
  const nonces = () => Promise.all([w.owner, w.minter].map((k) => f.provider.getTransactionCount(k.address)));
  let noncesBefore: number[];

  before(async function () {
    this.timeout(180_000);
    w.owner = f.owner;
    w.minter = await f.fundedWallet();
    w.chainId = (await f.provider.getNetwork()).chainId.toString();
    const deployed = await f.api.post("/nft/deploy", { privateKey: f.owner.privateKey, standard: "erc1155" });
    expect(deployed.status, deployed.text).to.equal(201);
    w.editions = deployed.body.contractAddress;
    const edition = await f.api.post("/nft/createEdition", {
      ...by(f.owner, w),
      cost: "1000",
      maxSupply: 100,
      maxMintAmountPerTx: 5,
    });
    expect(edition.status, edition.text).to.equal(200);
    w.tokenId = edition.body.tokenId;
    // One real mint: the edition has a holder and the contract a balance to withdraw.
    const minted = await f.api.post("/nft/mint", { ...by(w.minter, w), tokenId: w.tokenId, mintAmount: 1 });
    expect(minted.status, minted.text).to.equal(200);
    // The index reads the chain on its own clock: the walk starts once it has the mint.
    await eventually("the index has the edition's holder", 60_000, async () => {
      const token = await f.api.get(`/collections/${w.editions}/tokens/${w.tokenId}`);
      return token.status === 200;
    });
    noncesBefore = await nonces();
    for (const route of onACollection) {
      if (!(route in CALLS)) continue;
      const call = CALLS[route](w);
      answers.set(route, await f.api.request(route.split(" ")[0], call.path, { json: call.body, headers: ROOT }));
    }
  });

  after(function () {
    // PRINT_WALK=1: each route's status and error code, for the routes whose branch is still to merge.
    if (process.env.PRINT_WALK)
      for (const [route, res] of answers) console.log(`${res.status} ${res.body.error?.code ?? ""} ${route}`);
  });

  it("each operation on a collection has a call here, or is listed as acting on none (and every list names documented routes)", function () {
    const missing = onACollection.filter((r) => !(r in CALLS) && !(r in NOT_A_COLLECTION));
    expect(missing, "routes on a collection the walk does not call").to.deep.equal([]);
    const documented = new Set(operationsOf(doc).map((op) => `${op.method.toUpperCase()} ${op.path}`));
    for (const [name, list] of Object.entries({
      CALLS,
      ERC721_ONLY,
      NOT_5XX_ONLY,
      NOT_A_COLLECTION,
      TOKEN_ID_OPTIONAL,
    }))
      expect(
        Object.keys(list).filter((r) => !documented.has(r)),
        `${name}: routes no longer documented`,
      ).to.deep.equal([]);
  });

  it("no operation answers 5xx, nor 422 UNSUPPORTED_CONTRACT, nor a status it does not document", function () {
    const wrong = [...answers].flatMap(([route, res]) => {
      if (res.status >= 500) return [`${route}: ${res.status} ${res.text}`];
      if (route in NOT_5XX_ONLY) return [];
      if (res.status === 422 && res.body.error?.code === "UNSUPPORTED_CONTRACT")
        return [`${route}: 422 UNSUPPORTED_CONTRACT ${res.text}`];
      // A dry run answers 200 with the plan, whatever the write's own success status (deploy's 201).
      const dryRunAnswer =
        CALLS[route](w).path.endsWith("?dryRun=true") && res.status === 200 && res.body.dryRun === true;
      if (!dryRunAnswer && !documentedStatuses(route).includes(String(res.status)))
        return [`${route}: undocumented ${res.status}`];
      return [];
    });
    expect(wrong).to.deep.equal([]);
  });

  it("the walk sent nothing: the owner's and the minter's nonces are where they were before it", async function () {
    expect(await nonces()).to.deep.equal(noncesBefore);
  });

  it("each route for both standards answers its success on the edition (a dry run for a write)", function () {
    const failed = [...answers]
      .filter(([route]) => !(route in ERC721_ONLY) && !(route in NOT_5XX_ONLY))
      .filter(([, res]) => res.status < 200 || res.status > 299)
      .map(([route, res]) => `${route}: ${res.status} ${res.text}`);
    expect(failed).to.deep.equal([]);
    const notDry = [...answers]
      .filter(
        ([route]) =>
          !(route in ERC721_ONLY) && !(route in NOT_5XX_ONLY) && CALLS[route](w).path.endsWith("?dryRun=true"),
      )
      .filter(([, res]) => res.body.dryRun !== true)
      .map(([route, res]) => `${route}: ${res.text}`);
    expect(notDry, "writes that did not answer a dry run").to.deep.equal([]);
  });

  it("each ERC-721-only route answers 400 VALIDATION_ERROR naming the standard (the reveal: 409 naming it, as API.md says)", function () {
    const refusedAsDocumented = (route: string, res: ApiResponse): boolean => {
      const message = String(res.body.error?.message ?? "");
      if (ERC721_ONLY[route] === NO_REVEAL) return res.status === 409 && /ERC-1155/.test(message);
      return (
        res.status === 400 && res.body.error.code === "VALIDATION_ERROR" && /ERC-721 only; .* ERC-1155/.test(message)
      );
    };
    const wrong = [...answers]
      .filter(([route]) => route in ERC721_ONLY && !(route in NOT_5XX_ONLY))
      .filter(([route, res]) => !refusedAsDocumented(route, res))
      .map(([route, res]) => `${route}: ${res.status} ${res.text}`);
    expect(wrong).to.deep.equal([]);
  });

  it("each body that takes tokenId, sent without it, answers 400 VALIDATION_ERROR naming tokenId and sends nothing", async function () {
    this.timeout(60_000);
    const routes = Object.keys(CALLS).filter(
      (route) =>
        takes(route, "tokenId") && !(route in TOKEN_ID_OPTIONAL) && !(route in ERC721_ONLY) && !(route in NOT_5XX_ONLY),
    );
    expect(routes, "routes taking tokenId").to.include.members(["POST /nft/mint", "POST /nft/setCost"]);
    const wrong: string[] = [];
    const before = await nonces();
    for (const route of routes) {
      const call = CALLS[route](w);
      const { tokenId: _left, ...body } = call.body ?? {};
      // Without ?dryRun: the 400 must come before anything is planned or sent.
      const res = await f.api.request(route.split(" ")[0], call.path.replace(/\?dryRun=true$/, ""), {
        json: body,
        headers: ROOT,
      });
      const paths = ((res.body.error?.details ?? []) as { path: string }[]).map((d) => d.path);
      if (res.status !== 400 || res.body.error.code !== "VALIDATION_ERROR" || !paths.includes("tokenId"))
        wrong.push(`${route}: ${res.status} ${res.text}`);
    }
    expect(wrong).to.deep.equal([]);
    expect(await nonces(), "nonces of the owner and the minter").to.deep.equal(before);
  });

  it("each body that takes tokenId, naming an edition that does not exist, answers 404 TOKEN_NOT_FOUND and sends nothing", async function () {
    this.timeout(60_000);
    const routes = Object.keys(CALLS).filter(
      (route) => takes(route, "tokenId") && !(route in ERC721_ONLY) && !(route in NOT_5XX_ONLY),
    );
    const wrong: string[] = [];
    const before = await nonces();
    for (const route of routes) {
      const call = CALLS[route](w);
      const res = await f.api.request(route.split(" ")[0], call.path.replace(/\?dryRun=true$/, ""), {
        json: { ...call.body, tokenId: "999999" },
        headers: ROOT,
      });
      if (res.status !== 404 || res.body.error?.code !== "TOKEN_NOT_FOUND")
        wrong.push(`${route}: ${res.status} ${res.text}`);
    }
    expect(wrong).to.deep.equal([]);
    expect(await nonces(), "nonces of the owner and the minter").to.deep.equal(before);
  });

  describeSecrets(f);
});
