import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "chai";
import { encryptKeystoreJson, getAddress, parseEther, Wallet, type JsonRpcProvider } from "ethers";
import { expectError, expectNoSecretsIn } from "../api/expectations";
import {
  ApiClient,
  ChainNode,
  collectionAt,
  deployDirectly,
  directProvider,
  fundedWallet,
  type ApiResponse,
  type JsonBody,
  type ServiceProcess,
} from "../api/harness";
import type { SoftHsmToken } from "../support/softhsm";
import {
  fund,
  importableKey,
  KeyedClient,
  newMasterKey,
  pbkdf2Keystore,
  secretsInFiles,
  startWalletService,
  tokenWithKey,
  walletEnv,
} from "./fixture";

const COST = parseEther("0.01");

describe("wallets the service holds (PGlite, automining node)", function () {
  this.timeout(60_000);
  let node: ChainNode;
  let provider: JsonRpcProvider;
  let hsm: SoftHsmToken;
  let hsmKeyAddress: string;
  let dataDir: string;
  let service: ServiceProcess;
  let api: ApiClient;
  let root: KeyedClient;

  before(async function () {
    this.timeout(180_000);
    [node, { hsm, keyAddress: hsmKeyAddress }] = await Promise.all([ChainNode.start(), tokenWithKey("hsm-key")]);
    provider = directProvider(node.rpcUrl);
    dataDir = mkdtempSync(path.join(tmpdir(), "wallets-test-"));
    service = await startWalletService(node.rpcUrl, dataDir, walletEnv(newMasterKey(), hsm, { TX_TIMEOUT_MS: "3000" }));
    api = new ApiClient(service.url);
    root = new KeyedClient(api);
  });

  after(async function () {
    this.timeout(30_000);
    provider?.destroy();
    await service?.stop();
    await node?.stop();
    hsm?.remove();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  /** The transaction of a write answer: sent by `from`, mined. */
  async function sentBy(res: ApiResponse, from: string): Promise<void> {
    expect(res.body.from, res.text).to.equal(from);
    const tx = await provider.getTransaction(res.body.transactionHash);
    expect(tx!.from).to.equal(from);
  }

  describe("holding wallets", function () {
    it("POST /wallets {kind:local} makes a key: 201 with address, label, kind, createdAt and no key; an audit event in the store", async function () {
      const res = await root.post("/wallets", { kind: "local", label: "made-here" });
      expect(res.status, res.text).to.equal(201);
      expect(Object.keys(res.body)).to.have.members(["address", "label", "kind", "createdAt"]);
      expect(res.body).to.include({ label: "made-here", kind: "local" });
      expect(res.body.address).to.equal(getAddress(res.body.address));
      const events = await root.get("/audit-events?limit=1");
      expect(events.body.auditEvents[0]).to.include({
        action: "wallet.created",
        targetType: "wallet",
        targetId: res.body.address,
        keyName: "root (API_KEY)",
      });
      expect(events.body.auditEvents[0].details).to.deep.equal({
        label: "made-here",
        kind: "local",
        source: "generated",
      });
    });

    it("imports a raw privateKey; the same address again, or the same label, is 409 WALLET_EXISTS", async function () {
      const key = importableKey();
      const res = await root.post("/wallets", { kind: "local", label: "imported", privateKey: key.privateKey });
      expect(res.status, res.text).to.equal(201);
      expect(res.body.address).to.equal(key.address);
      expectError(
        await root.post("/wallets", { kind: "local", label: "again", privateKey: key.privateKey }),
        409,
        "WALLET_EXISTS",
      );
      expectError(await root.post("/wallets", { kind: "local", label: "imported" }), 409, "WALLET_EXISTS");
    });

    it("imports an ethers keystore (Web3 Secret Storage v3) with its password, and signs with it; a wrong password is 400 VALIDATION_ERROR", async function () {
      const key = importableKey();
      const password = `keystore-password-${Date.now()}`;
      const keystore = JSON.parse(await key.encrypt(password)) as Record<string, unknown>;
      const wrong = await root.post("/wallets", {
        kind: "local",
        label: "from-keystore",
        keystore,
        password: "not it",
      });
      expect(expectError(wrong, 400, "VALIDATION_ERROR").details).to.deep.equal([
        { path: "password", message: "does not decrypt this keystore" },
      ]);
      const res = await root.post("/wallets", { kind: "local", label: "from-keystore", keystore, password });
      expect(res.status, res.text).to.equal(201);
      expect(res.body.address).to.equal(key.address);
      await fund(provider, key.address);
      const owner = (await fundedWallet(provider)).connect(provider);
      const collection = await deployFor(owner);
      const mint = await root.post("/nft/mint", { from: "from-keystore", contractAddress: collection, mintAmount: 1 });
      expect(mint.status, mint.text).to.equal(200);
      await sentBy(mint, key.address);
    });

    it("keystores: an unsupported cipher (aes-256-cbc) is 400 VALIDATION_ERROR, not 500; scrypt past geth's and Foundry's parameters (p too) is 400 (issue 35)", async function () {
      const key = importableKey();
      const password = `keystore-password-${randomBytes(8).toString("hex")}`;
      const keystore = JSON.parse(await encryptKeystoreJson(key, password, { scrypt: { N: 1024 } }));
      const withCrypto = (changes: JsonBody) => ({ ...keystore, Crypto: { ...keystore.Crypto, ...changes } });
      const withKdf = (changes: JsonBody) => withCrypto({ kdfparams: { ...keystore.Crypto.kdfparams, ...changes } });
      const cbc = await root.post("/wallets", {
        kind: "local",
        label: "cbc",
        keystore: withCrypto({ cipher: "aes-256-cbc" }),
        password,
      });
      expect(expectError(cbc, 400, "VALIDATION_ERROR").details[0].path).to.equal("keystore");
      for (const [kdfparams, why] of [
        [{ p: 7 }, "p above geth's light keystores' 6"],
        [{ n: 2 ** 18, p: 2 }, "N·r·p past geth's standard keystore"],
        [{ n: 2 ** 19 }, "N past 2^18 at r = 8"],
        [{ r: 16, n: 2 ** 18 }, "r past 8 at N = 2^18"],
      ] as const) {
        const res = await root.post("/wallets", {
          kind: "local",
          label: "costly",
          keystore: withKdf(kdfparams),
          password,
        });
        expect(res.status, `${why}: ${res.text}`).to.equal(400);
        expect(res.body.error.message).to.include("geth and Foundry");
      }
      // geth's light parameters (N = 2^12, p = 6) are within them.
      const light = JSON.parse(await encryptKeystoreJson(key, password, { scrypt: { N: 2 ** 12, p: 6 } }));
      const imported = await root.post("/wallets", {
        kind: "local",
        label: "light-keystore",
        keystore: light,
        password,
      });
      expect(imported.status, imported.text).to.equal(201);
      expect(imported.body.address).to.equal(key.address);
    });

    it("a pbkdf2 keystore (hmac-sha256, 262144 rounds) imports and signs; a wrong password is 400 (issue 35)", async function () {
      const key = importableKey();
      const password = `pbkdf2-password-${randomBytes(8).toString("hex")}`;
      const keystore = pbkdf2Keystore(key, password, 2 ** 18);
      expectError(
        await root.post("/wallets", { kind: "local", label: "pbkdf2", keystore, password: "wrong" }),
        400,
        "VALIDATION_ERROR",
      );
      const res = await root.post("/wallets", { kind: "local", label: "pbkdf2", keystore, password });
      expect(res.status, res.text).to.equal(201);
      expect(res.body.address).to.equal(key.address);
      await fund(provider, key.address);
      const collection = await deployFor((await fundedWallet(provider)).connect(provider));
      const mint = await root.post("/nft/mint", { from: "pbkdf2", contractAddress: collection, mintAmount: 1 });
      expect(mint.status, mint.text).to.equal(200);
      await sentBy(mint, key.address);
      const tooMany = await root.post("/wallets", {
        kind: "local",
        label: "pbkdf2-2",
        keystore: pbkdf2Keystore(key, password, 2 ** 18 + 1),
        password,
      });
      expectError(tooMany, 400, "VALIDATION_ERROR");
    });

    it("no error echoes from, password or keystore: a private key pasted into from, a keystore's values, a password (issue 35)", async function () {
      const pasted = importableKey().privateKey;
      const collection = Wallet.createRandom().address;
      const echoes: string[] = [];
      const check = (res: ApiResponse, values: string[]) => {
        expect(res.status, res.text).to.be.within(400, 499);
        for (const value of values)
          if (res.text.toLowerCase().includes(value.toLowerCase()))
            echoes.push(`${value.slice(0, 12)}… in ${res.text}`);
      };
      for (const from of [pasted, pasted.slice(2)]) {
        for (const [route, extra] of [
          ["/nft/mint", { mintAmount: 1 }],
          ["/nft/tokenURI", { tokenId: 1 }],
          ["/nft/mint", { mintAmount: 0 }],
        ] as const) {
          check(await root.post(route, { from, contractAddress: collection, ...extra }), [pasted.slice(2)]);
        }
      }
      const key = importableKey();
      const password = `echo-password-${randomBytes(8).toString("hex")}`;
      const keystore = JSON.parse(await encryptKeystoreJson(key, password, { scrypt: { N: 1024 } }));
      const values = [...stringsIn(keystore).filter((v) => v.length >= 16), password, key.address.slice(2)];
      const broken: JsonBody[] = [
        keystore,
        { ...keystore, Crypto: { ...keystore.Crypto, mac: `${keystore.Crypto.mac}00` } },
        { ...keystore, Crypto: { ...keystore.Crypto, ciphertext: `zz${keystore.Crypto.ciphertext}` } },
        { ...keystore, Crypto: { ...keystore.Crypto, kdf: `${keystore.Crypto.kdfparams.salt}` } },
        { ...keystore, Crypto: { ...keystore.Crypto, cipher: `${keystore.Crypto.ciphertext}` } },
        { ...keystore, version: keystore.Crypto.ciphertext },
      ];
      for (const body of broken) {
        check(
          await root.post("/wallets", { kind: "local", label: "echo", keystore: body, password: `${password}-wrong` }),
          [...values, `${password}-wrong`],
        );
      }
      check(await root.post("/wallets", { kind: "local", label: "echo", keystore, password: 12345 }), values);
      expect(echoes).to.deep.equal([]);
    });

    it("holds a key of the PKCS#11 token by its keyLabel: the address is the token key's; an unknown keyLabel is 400", async function () {
      const res = await root.post("/wallets", { kind: "pkcs11", label: "hsm", keyLabel: "hsm-key" });
      expect(res.status, res.text).to.equal(201);
      expect(res.body).to.include({ address: hsmKeyAddress, kind: "pkcs11", keyLabel: "hsm-key" });
      const unknown = await root.post("/wallets", { kind: "pkcs11", label: "nope", keyLabel: "no-such-key" });
      expect(expectError(unknown, 400, "VALIDATION_ERROR").details[0].path).to.equal("keyLabel");
    });

    it("refuses a label shaped like an address, an unknown kind, privateKey with a keystore", async function () {
      const address = Wallet.createRandom().address;
      expectError(await root.post("/wallets", { kind: "local", label: address }), 400, "VALIDATION_ERROR");
      expectError(await root.post("/wallets", { kind: "vault", label: "x" }), 400, "VALIDATION_ERROR");
      const both = {
        kind: "local",
        label: "x",
        privateKey: importableKey().privateKey,
        keystore: { version: 3 },
        password: "p",
      };
      expectError(await root.post("/wallets", both), 400, "VALIDATION_ERROR");
    });
  });

  for (const kind of ["local", "pkcs11"] as const) {
    describe(`every /nft operation through a ${kind} wallet (from)`, function () {
      let wallet: JsonBody;
      let collection: string;
      /** The wallet by label for the local one, by address for the pkcs11 one: both forms of `from`. */
      let from: string;
      const receiver = Wallet.createRandom().address;
      const write = (route: string, body: Record<string, unknown>) =>
        root.post(`/nft/${route}`, { from, contractAddress: collection, ...body });

      before(async function () {
        wallet =
          kind === "local"
            ? await root.createWallet({ kind: "local", label: "ops-local" })
            : (await root.get(`/wallets/${hsmKeyAddress}`)).body;
        from = kind === "local" ? "ops-local" : wallet.address;
        await fund(provider, wallet.address);
      });

      it("deploy: the wallet deploys and owns the new collection", async function () {
        const res = await root.post("/nft/deploy", { from, cost: COST.toString(), maxSupply: "100" });
        expect(res.status, res.text).to.equal(201);
        collection = res.body.contractAddress;
        await sentBy(res, wallet.address);
        expect(await collectionAt(collection, provider).owner()).to.equal(wallet.address);
      });

      it("setCost, setPaused and addUserAddressToWhitelist change the collection, sent by the wallet", async function () {
        const cost = await write("setCost", { cost: (COST * 2n).toString() });
        expect(cost.status, cost.text).to.equal(200);
        await sentBy(cost, wallet.address);
        const paused = await write("setPaused", { state: true });
        await sentBy(paused, wallet.address);
        expect(await collectionAt(collection, provider).paused()).to.equal(true);
        await sentBy(await write("setPaused", { state: false }), wallet.address);
        const listed = await write("addUserAddressToWhitelist", { address: receiver });
        await sentBy(listed, wallet.address);
        expect(await collectionAt(collection, provider).whitelisted(receiver)).to.equal(true);
      });

      it("mint pays cost × amount from the wallet, which owns the tokens; mintForFree mints to a receiver", async function () {
        const before = await provider.getBalance(wallet.address);
        const mint = await write("mint", { mintAmount: 2 });
        expect(mint.status, mint.text).to.equal(200);
        await sentBy(mint, wallet.address);
        expect(mint.body.value).to.equal((COST * 4n).toString());
        const nft = collectionAt(collection, provider);
        for (const id of mint.body.tokenIds as string[]) expect(await nft.ownerOf(id)).to.equal(wallet.address);
        expect(before - (await provider.getBalance(wallet.address)) > COST * 4n).to.equal(true);
        const free = await write("mintForFree", { mintAmount: 1, receiver });
        await sentBy(free, wallet.address);
        expect(await nft.ownerOf(free.body.tokenIds[0])).to.equal(receiver);
      });

      it("tokenURI and total-supply read as the wallet (its tokens in total-supply's wallet)", async function () {
        const uri = await root.post("/nft/tokenURI", { from, contractAddress: collection, tokenId: "1" });
        expect(uri.status, uri.text).to.equal(200);
        expect(uri.body.tokenURI).to.match(/1\.json$/);
        const supply = await root.post("/nft/total-supply", { from, contractAddress: collection });
        expect(supply.body.totalSupply).to.equal("3");
        expect(supply.body.wallet).to.deep.equal({ address: wallet.address, tokenIds: ["1", "2"] });
      });

      it("withdraw sends the collection's balance to the wallet, its owner", async function () {
        const res = await write("withdraw", {});
        expect(res.status, res.text).to.equal(200);
        await sentBy(res, wallet.address);
        expect(res.body).to.include({ amount: (COST * 4n).toString(), to: wallet.address });
        expect(await provider.getBalance(collection)).to.equal(0n);
      });
    });
  }

  describe("reading, relabelling, limits of access keys", function () {
    let local: JsonBody;

    before(async function () {
      local = await root.createWallet({ kind: "local", label: "shop-wallet" });
      await fund(provider, local.address, 5n * 10n ** 18n);
    });

    it("GET /wallets/{address} shows label, kind, balance from the chain, next nonce, unfinished operations and policy", async function () {
      const res = await root.get(`/wallets/${local.address}`);
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.deep.include({
        address: local.address,
        label: "shop-wallet",
        kind: "local",
        balance: (5n * 10n ** 18n).toString(),
        nextNonce: 0,
        unfinishedOperations: 0,
        unfinishedOperationIds: [],
        policy: { dailySpendLimit: null, lowBalance: null, spentToday: "0" },
      });
      expectError(await root.get(`/wallets/${Wallet.createRandom().address}`), 404, "WALLET_NOT_FOUND");
    });

    it("a key limited to one wallet lists only that one, signs only with it (404 WALLET_NOT_FOUND otherwise) and cannot add others", async function () {
      const made = await root.post("/access-keys", {
        name: "shop",
        scopes: ["nft:read", "wallets:read", "wallets:manage"],
        wallets: [local.address],
      });
      expect(made.status, made.text).to.equal(201);
      const shop = root.as(made.body.key);
      const listed = await shop.get("/wallets");
      expect(listed.body.wallets.map((w: JsonBody) => w.address)).to.deep.equal([local.address]);
      expect((await root.get("/wallets")).body.wallets.length).to.be.greaterThan(1);
      expectError(await shop.get(`/wallets/${hsmKeyAddress}`), 404, "WALLET_NOT_FOUND");
      const collection = await deployFor((await fundedWallet(provider)).connect(provider));
      const read = await shop.post("/nft/total-supply", { from: "shop-wallet", contractAddress: collection });
      expect(read.status, read.text).to.equal(200);
      expectError(
        await shop.post("/nft/total-supply", { from: "hsm", contractAddress: collection }),
        404,
        "WALLET_NOT_FOUND",
      );
      expectError(await shop.post("/wallets", { kind: "local", label: "shop-2" }), 403, "FORBIDDEN");
    });

    it("GET /wallets pages with limit (at most 500) and cursor, oldest first, without gaps or repeats; balances from the chain (issue 35)", async function () {
      const all = (await root.get("/wallets?limit=500")).body.wallets as JsonBody[];
      expect(all.length).to.be.greaterThan(3);
      const walked: JsonBody[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const res = await root.get(`/wallets?limit=2${cursor ? `&cursor=${cursor}` : ""}`);
        expect(res.status, res.text).to.equal(200);
        expect(res.body.wallets.length).to.be.at.most(2);
        walked.push(...res.body.wallets);
        cursor = res.body.cursor;
        pages++;
      } while (cursor);
      expect(pages).to.equal(Math.ceil(all.length / 2));
      expect(walked.map((w) => w.address)).to.deep.equal(all.map((w) => w.address));
      const created = walked.map((w) => Date.parse(w.createdAt as string));
      expect(created).to.deep.equal([...created].sort((a, b) => a - b));
      for (const wallet of walked)
        expect(wallet.balance).to.equal((await provider.getBalance(wallet.address as string)).toString());
      for (const query of ["limit=0", "limit=501", "cursor=abc"])
        expectError(await root.get(`/wallets?${query}`), 400, "VALIDATION_ERROR");
    });

    it("a wallet the key may not use answers exactly as an unknown one: 404 WALLET_NOT_FOUND naming neither its address nor its label (issue 35)", async function () {
      const made = await root.post("/access-keys", {
        name: "petty",
        scopes: ["nft:read", "nft:mint", "wallets:read", "wallets:manage"],
        wallets: [local.address],
      });
      expect(made.status, made.text).to.equal(201);
      const petty = root.as(made.body.key);
      const collection = await deployFor((await fundedWallet(provider)).connect(provider));
      const unknown = Wallet.createRandom().address;
      const same = (held: ApiResponse, none: ApiResponse) => {
        expectError(held, 404, "WALLET_NOT_FOUND");
        expect(held.body, held.text).to.deep.equal(none.body);
        for (const named of [hsmKeyAddress.slice(2).toLowerCase(), '"hsm"', unknown.slice(2).toLowerCase()])
          expect(held.text.toLowerCase()).to.not.include(named.toLowerCase());
      };
      for (const [held, none] of [
        ["hsm", "nobody-holds-this"],
        [hsmKeyAddress, unknown],
        [hsmKeyAddress.toLowerCase(), unknown.toLowerCase()],
      ]) {
        const mint = (from: string) => petty.post("/nft/mint", { from, contractAddress: collection, mintAmount: 1 });
        same(await mint(held), await mint(none));
      }
      same(await petty.get(`/wallets/${hsmKeyAddress}`), await petty.get(`/wallets/${unknown}`));
      same(
        await petty.patch(`/wallets/${hsmKeyAddress}`, { lowBalance: "1" }),
        await petty.patch(`/wallets/${unknown}`, { lowBalance: "1" }),
      );
      same(await petty.delete(`/wallets/${hsmKeyAddress}`), await petty.delete(`/wallets/${unknown}`));
      expect(await collectionAt(collection, provider).totalSupply()).to.equal(0n);
      // POST /wallets: the key's limits first, so a label in use is not told to a key that may not add the wallet.
      const taken = await petty.post("/wallets", { kind: "local", label: "hsm" });
      expectError(taken, 403, "FORBIDDEN");
      expectError(await petty.post("/wallets", { kind: "local", label: "free-label" }), 403, "FORBIDDEN");
      // The root key (all wallets) still hears 409 for the label at once.
      expectError(await root.post("/wallets", { kind: "local", label: "hsm" }), 409, "WALLET_EXISTS");
    });

    it("a key limited to one wallet sees only that wallet's audit events (and the keys it made) (issue 35)", async function () {
      const made = await root.post("/access-keys", {
        name: "wallet auditor",
        scopes: ["access-keys:manage", "wallets:read"],
        wallets: [local.address],
      });
      expect(made.status, made.text).to.equal(201);
      const events = (await root.as(made.body.key).get("/audit-events?limit=500")).body.auditEvents as JsonBody[];
      expect(events.length).to.be.greaterThan(0);
      for (const event of events) expect(event).to.include({ targetType: "wallet", targetId: local.address });
      const all = (await root.get("/audit-events?limit=500")).body.auditEvents as JsonBody[];
      expect(all.some((e) => e.targetType === "wallet" && e.targetId === hsmKeyAddress)).to.equal(true);
    });

    it("from without an access key is 401, an unknown wallet 404 WALLET_NOT_FOUND", async function () {
      const body = { from: "shop-wallet", contractAddress: Wallet.createRandom().address };
      expectError(await api.post("/nft/total-supply", body), 401, "UNAUTHORIZED");
      expectError(await root.post("/nft/total-supply", { ...body, from: "nobody" }), 404, "WALLET_NOT_FOUND");
    });

    it("PATCH renames (the new label signs at once, the old one is 404), a label in use is 409; each change is audited", async function () {
      const res = await root.patch(`/wallets/${local.address}`, { label: "shop-main", lowBalance: "1000" });
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.deep.include({
        label: "shop-main",
        policy: { dailySpendLimit: null, lowBalance: "1000", spentToday: "0" },
      });
      const collection = await deployFor((await fundedWallet(provider)).connect(provider));
      const read = (from: string) => root.post("/nft/total-supply", { from, contractAddress: collection });
      expect((await read("shop-main")).status).to.equal(200);
      expectError(await read("shop-wallet"), 404, "WALLET_NOT_FOUND");
      expectError(await root.patch(`/wallets/${local.address}`, { label: "hsm" }), 409, "WALLET_EXISTS");
      const [event] = (await root.get("/audit-events?limit=1")).body.auditEvents;
      expect(event).to.include({ action: "wallet.updated", targetId: local.address });
      expect(event.details).to.deep.equal({
        label: { from: "shop-wallet", to: "shop-main" },
        lowBalance: { from: null, to: "1000" },
      });
    });
  });

  describe("daily spend limit", function () {
    let collection: string;
    const limited = importableKey();

    before(async function () {
      collection = await deployFor((await fundedWallet(provider)).connect(provider));
      await root.createWallet({ kind: "local", label: "limited", privateKey: limited.privateKey });
      await fund(provider, limited.address);
      // Two mints (value 0.01 ether + gas) fit in 0.025 ether; a third does not.
      const res = await root.patch(`/wallets/${limited.address}`, { dailySpendLimit: parseEther("0.025").toString() });
      expect(res.status, res.text).to.equal(200);
    });

    it("six concurrent mints under a limit two fit in: two confirm, four are 409 SPEND_LIMIT_EXCEEDED; refused ones change neither the nonce nor the store", async function () {
      const mint = () => root.post("/nft/mint", { from: "limited", contractAddress: collection, mintAmount: 1 });
      const answers = await Promise.all(Array.from({ length: 6 }, mint));
      expect(answers.map((r) => r.status).sort(), answers.map((r) => r.text).join("\n")).to.deep.equal([
        200, 200, 409, 409, 409, 409,
      ]);
      for (const res of answers.filter((r) => r.status === 409)) expectError(res, 409, "SPEND_LIMIT_EXCEEDED");
      const before = (await root.get(`/wallets/${limited.address}`)).body;
      const nonce = await provider.getTransactionCount(limited.address, "pending");
      expect(nonce).to.equal(2);
      expectError(await mint(), 409, "SPEND_LIMIT_EXCEEDED");
      expect(await provider.getTransactionCount(limited.address, "pending")).to.equal(nonce);
      const after = (await root.get(`/wallets/${limited.address}`)).body;
      expect(after).to.deep.equal(before);
      expect(BigInt(after.policy.spentToday)).to.be.lessThanOrEqual(parseEther("0.025"));
      expect(await collectionAt(collection, provider).totalSupply()).to.equal(2n);
    });

    it("raising the limit lets the next write through at once; removing it (null) lifts it", async function () {
      await root.patch(`/wallets/${limited.address}`, { dailySpendLimit: parseEther("1").toString() });
      const res = await root.post("/nft/mint", { from: "limited", contractAddress: collection, mintAmount: 1 });
      expect(res.status, res.text).to.equal(200);
      const cleared = await root.patch(`/wallets/${limited.address}`, { dailySpendLimit: null });
      expect(cleared.body.policy.dailySpendLimit).to.equal(null);
    });
  });

  describe("deleting", function () {
    it("with an operation unfinished: 409 WALLET_BUSY, listed on GET; once it confirms, 204 and the wallet is gone", async function () {
      const wallet = await root.createWallet({ kind: "local", label: "leaving" });
      await fund(provider, wallet.address);
      const collection = await deployFor((await fundedWallet(provider)).connect(provider));
      await provider.send("evm_setAutomine", [false]);
      let pending: ApiResponse;
      try {
        pending = await root.post("/nft/mint", { from: "leaving", contractAddress: collection, mintAmount: 1 });
        expect(pending.status, pending.text).to.equal(202);
        expectError(await root.delete(`/wallets/${wallet.address}`), 409, "WALLET_BUSY");
        const shown = (await root.get(`/wallets/${wallet.address}`)).body;
        expect(shown).to.include({ unfinishedOperations: 1, nextNonce: 1 });
        expect(shown.unfinishedOperationIds).to.deep.equal([pending.body.operationId]);
      } finally {
        await provider.send("evm_setAutomine", [true]);
      }
      await provider.send("evm_mine", []);
      for (let i = 0; ; i++) {
        const op = await root.get(`/nft/operations/${pending.body.operationId}`);
        if (op.body.status === "confirmed") break;
        if (i > 100) throw new Error(`still ${op.text}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      const res = await root.delete(`/wallets/${wallet.address}`);
      expect(res.status, res.text).to.equal(204);
      expectError(await root.get(`/wallets/${wallet.address}`), 404, "WALLET_NOT_FOUND");
      expectError(
        await root.post("/nft/total-supply", { from: "leaving", contractAddress: collection }),
        404,
        "WALLET_NOT_FOUND",
      );
      const [event] = (await root.get("/audit-events?limit=1")).body.auditEvents;
      expect(event).to.deep.include({
        action: "wallet.deleted",
        targetId: wallet.address,
        details: { label: "leaving", kind: "local" },
      });
    });
  });

  describe("a PKCS#11 token taken away and put back (issue 35)", function () {
    let collection: string;

    before(async function () {
      collection = await deployFor((await fundedWallet(provider)).connect(provider));
      await fund(provider, hsmKeyAddress);
    });

    after(function () {
      if (existsSync(`${hsm.tokenDir}.away`)) renameSync(`${hsm.tokenDir}.away`, hsm.tokenDir);
    });

    const mint = () => root.post("/nft/mint", { from: "hsm", contractAddress: collection, mintAmount: 1 });

    it("absent: 503 SIGNER_UNAVAILABLE (not 500), nothing sent; back: the service logs in again by itself and signs", async function () {
      const before = await mint();
      expect(before.status, before.text).to.equal(200);
      const supply = await collectionAt(collection, provider).totalSupply();
      const nonce = await provider.getTransactionCount(hsmKeyAddress);
      renameSync(hsm.tokenDir, `${hsm.tokenDir}.away`);
      // The first signature finds the token gone; the next ones find it cannot be opened.
      for (let i = 0; i < 3; i++) {
        const res = await mint();
        expectError(res, 503, "SIGNER_UNAVAILABLE");
        expect(res.headers.get("retry-after")).to.equal("5");
        expect(res.text).to.not.include(hsm.pin);
      }
      expectError(
        await root.post("/wallets", { kind: "pkcs11", label: "hsm-2", keyLabel: "hsm-key" }),
        503,
        "SIGNER_UNAVAILABLE",
      );
      expect(await collectionAt(collection, provider).totalSupply()).to.equal(supply);
      expect(await provider.getTransactionCount(hsmKeyAddress)).to.equal(nonce);
      renameSync(`${hsm.tokenDir}.away`, hsm.tokenDir);
      const after = await mint();
      expect(after.status, after.text).to.equal(200);
      await sentBy(after, hsmKeyAddress);
      expect(await collectionAt(collection, provider).totalSupply()).to.equal(supply + 1n);
      expect(service.output()).to.include("PKCS#11 token absent or logged out");
      expect(service.output().split("PKCS#11 token absent or logged out")[1]).to.include(
        '"msg":"PKCS#11 token opened"',
      );
    });
  });

  describe("secrets", function () {
    it("no response, no log line and no file of the PGlite store holds a key, the master key or the PIN", async function () {
      this.timeout(60_000);
      expectNoSecretsIn(api.responseTexts, service.output());
      await service.stop(); // the store closed: every page on disk
      expect(secretsInFiles(path.join(dataDir, "pglite"))).to.deep.equal([]);
    });
  });
});

/** Every string in a JSON value. */
function stringsIn(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (typeof value !== "object" || value === null) return [];
  return Object.values(value).flatMap(stringsIn);
}

/** A reference collection (cost 0.01 ether) deployed straight with ethers by `owner`. */
function deployFor(owner: Wallet): Promise<string> {
  return deployDirectly(owner, { cost: COST });
}
