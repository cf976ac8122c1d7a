import { readFile, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "chai";
import { openUserStore, type UserStore } from "../../server/users";
import { startUserServer, type UserServer } from "./user-server";

/** The slice of swagger-client (untyped on npm) this test uses. */
interface SwaggerResponse {
  status: number;
  body: unknown;
  headers: Record<string, string>;
}
type Operation = (params?: Record<string, unknown>) => Promise<SwaggerResponse>;
interface SwaggerClient {
  apis: { user: Record<string, Operation> };
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const SwaggerClient = require("swagger-client") as (options: { spec: unknown }) => Promise<SwaggerClient>;

/** The Petstore v2 document, read at test time from the shared reference (never copied here). */
const PETSTORE_SPEC = path.resolve(__dirname, "../../../shared/reference/petstore-v2.json");

/** swagger-client rejects non-2xx answers; this turns them back into a response to assert on. */
async function settle(call: Promise<SwaggerResponse>): Promise<SwaggerResponse> {
  try {
    return await call;
  } catch (err) {
    const response = (err as { response?: SwaggerResponse }).response;
    if (!response) throw err;
    return response;
  }
}

describe("an unchanged Petstore v2 client (swagger-client) against /v2/user", function () {
  let dataDir: string;
  let store: UserStore;
  let server: UserServer;
  let user: Record<string, Operation>;

  before(async function () {
    dataDir = await mkdtemp(path.join(tmpdir(), "users-petstore-"));
    store = await openUserStore({ dataDir });
    server = await startUserServer(store);
    const spec = JSON.parse(await readFile(PETSTORE_SPEC, "utf8"));
    spec.host = server.host;
    spec.schemes = ["http"];
    user = (await SwaggerClient({ spec })).apis.user;
  });

  after(async function () {
    await server?.close();
    await store?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("has every /user operation of the document", function () {
    expect(Object.keys(user)).to.include.members([
      "createUser",
      "createUsersWithListInput",
      "createUsersWithArrayInput",
      "loginUser",
      "logoutUser",
      "getUserByName",
      "updateUser",
      "deleteUser",
    ]);
  });

  it("createUser, then getUserByName answers the user without its password", async function () {
    const created = await user.createUser({
      body: {
        id: 10,
        username: "theUser",
        firstName: "John",
        lastName: "James",
        email: "john@email.com",
        password: "12345",
        phone: "12345",
        userStatus: 1,
      },
    });
    expect(created.status).to.equal(200);
    expect(created.body).to.deep.equal({ code: 200, type: "unknown", message: "10" });

    const got = await user.getUserByName({ username: "theUser" });
    expect(got.status).to.equal(200);
    expect(got.body).to.deep.equal({
      id: "10",
      username: "theUser",
      firstName: "John",
      lastName: "James",
      email: "john@email.com",
      phone: "12345",
      userStatus: 1,
    });
  });

  it("createUsersWithListInput and createUsersWithArrayInput store every user", async function () {
    const list = await user.createUsersWithListInput({
      body: [
        { id: 11, username: "list1", password: "pw-list1" },
        { id: 12, username: "list2", password: "pw-list2" },
      ],
    });
    expect(list.status).to.equal(200);
    expect(list.body).to.deep.equal({ code: 200, type: "unknown", message: "ok" });

    const array = await user.createUsersWithArrayInput({
      body: [{ id: 13, username: "array1", password: "pw-array1" }],
    });
    expect(array.status).to.equal(200);
    expect(array.body).to.deep.equal({ code: 200, type: "unknown", message: "ok" });

    for (const [username, id] of [
      ["list1", "11"],
      ["list2", "12"],
      ["array1", "13"],
    ]) {
      expect((await user.getUserByName({ username })).body).to.deep.equal({ id, username });
    }
  });

  it("createUsersWithListInput with a taken username fails with 409 and stores nothing", async function () {
    const reply = await settle(
      user.createUsersWithListInput({ body: [{ username: "fresh-one" }, { username: "theUser" }] }),
    );
    expect(reply.status).to.equal(409);
    expect(reply.body).to.have.nested.property("error.code", "USERNAME_TAKEN");
    expect((await settle(user.getUserByName({ username: "fresh-one" }))).status).to.equal(404);
  });

  it("loginUser answers the session string and the documented headers; a wrong password gets 400", async function () {
    const reply = await user.loginUser({ username: "theUser", password: "12345" });
    expect(reply.status).to.equal(200);
    expect(reply.body)
      .to.be.a("string")
      .and.to.match(/^logged in user session:[A-Za-z0-9_-]{43}$/);
    expect(reply.headers["x-rate-limit"]).to.match(/^\d+$/);
    expect(Date.parse(reply.headers["x-expires-after"])).to.be.greaterThan(Date.now());

    const wrong = await settle(user.loginUser({ username: "theUser", password: "54321" }));
    expect(wrong.status).to.equal(400);
    expect(wrong.body).to.have.nested.property("error.code", "INVALID_CREDENTIALS");
  });

  it("logoutUser answers ok", async function () {
    const reply = await user.logoutUser();
    expect(reply.status).to.equal(200);
    expect(reply.body).to.deep.equal({ code: 200, type: "unknown", message: "ok" });
  });

  it("updateUser changes the user, and the new password logs in", async function () {
    const reply = await user.updateUser({
      username: "theUser",
      body: { id: 10, username: "theUser", firstName: "Johnny", password: "67890", userStatus: 2 },
    });
    expect(reply.status).to.equal(200);
    expect(reply.body).to.deep.equal({ code: 200, type: "unknown", message: "10" });
    expect((await user.getUserByName({ username: "theUser" })).body).to.include({ firstName: "Johnny", userStatus: 2 });
    expect((await user.loginUser({ username: "theUser", password: "67890" })).status).to.equal(200);
  });

  it("getUserByName and updateUser of an unknown user get 404; an invalid username gets 400", async function () {
    const missing = await settle(user.getUserByName({ username: "nobody" }));
    expect(missing.status).to.equal(404);
    expect(missing.body).to.have.nested.property("error.code", "USER_NOT_FOUND");
    const update = await settle(user.updateUser({ username: "nobody", body: { firstName: "x" } }));
    expect(update.status).to.equal(404);
    const invalid = await settle(user.getUserByName({ username: "not valid!" }));
    expect(invalid.status).to.equal(400);
    expect(invalid.body).to.have.nested.property("error.code", "INVALID_USERNAME");
  });

  it("deleteUser removes the user; a second delete gets 404", async function () {
    const reply = await user.deleteUser({ username: "list2" });
    expect(reply.status).to.equal(200);
    expect(reply.body).to.deep.equal({ code: 200, type: "unknown", message: "list2" });
    expect((await settle(user.getUserByName({ username: "list2" }))).status).to.equal(404);
    const again = await settle(user.deleteUser({ username: "list2" }));
    expect(again.status).to.equal(404);
    expect(again.body).to.have.nested.property("error.code", "USER_NOT_FOUND");
  });
});
