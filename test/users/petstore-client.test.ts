import { readFile, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "chai";
import { OpenAPIRegistry, buildOpenApiDocument } from "../../server/http/openapi";
import { openUserStore, registerUserOpenApi, type UserStore } from "../../server/users";
import { startUserServer, type UserServer } from "./user-server";

/** The slice of swagger-client (untyped on npm) this test uses. */
interface SwaggerResponse {
  status: number;
  body: unknown;
  headers: Record<string, string>;
}
interface SwaggerRequest {
  url: string;
  headers: Record<string, string>;
}
interface CallOptions {
  /** Edits each request before it is sent (swagger-client's hook for credentials the document does not declare). */
  requestInterceptor?: (request: SwaggerRequest) => SwaggerRequest;
  /** The body of an OpenAPI 3 operation (Swagger 2 takes it as the `body` parameter instead). */
  requestBody?: unknown;
}
type Operation = (params?: Record<string, unknown>, options?: CallOptions) => Promise<SwaggerResponse>;
interface SwaggerClient {
  apis: { user: Record<string, Operation> };
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const SwaggerClient = require("swagger-client") as (options: {
  spec: unknown;
  /** Credentials by security scheme name, applied where the document asks for them. */
  authorizations?: Record<string, unknown>;
  requestInterceptor?: CallOptions["requestInterceptor"];
}) => Promise<SwaggerClient>;

/** The Petstore v2 document, read at test time from the shared reference (never copied here). */
const PETSTORE_SPEC = path.resolve(__dirname, "../../../shared/reference/petstore-v2.json");

/**
 * Petstore v2 declares no security on its user operations, so its client sends the session the
 * way Petstore's own `api_key` scheme says (header `api_key`), added to the request by hand.
 */
const withSession = (token: string): CallOptions => ({
  requestInterceptor: (request) => {
    request.headers.api_key = token;
    return request;
  },
});

const SESSION_TOKEN = /^logged in user session:([A-Za-z0-9_-]{43})$/;

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

  it("updateUser without a session gets 401 UNAUTHORIZED and changes nothing", async function () {
    const reply = await settle(user.updateUser({ username: "theUser", body: { firstName: "Mallory", password: "x" } }));
    expect(reply.status).to.equal(401);
    expect(reply.body).to.have.nested.property("error.code", "UNAUTHORIZED");
    expect((await user.getUserByName({ username: "theUser" })).body).to.include({ firstName: "John" });
    expect((await settle(user.loginUser({ username: "theUser", password: "x" }))).status).to.equal(400);
  });

  it("updateUser with the user's session (api_key) changes the user, and the new password logs in", async function () {
    const token = await sessionOf("theUser", "12345");
    const reply = await user.updateUser(
      {
        username: "theUser",
        body: { id: 10, username: "theUser", firstName: "Johnny", password: "67890", userStatus: 2 },
      },
      withSession(token),
    );
    expect(reply.status).to.equal(200);
    expect(reply.body).to.deep.equal({ code: 200, type: "unknown", message: "10" });
    expect((await user.getUserByName({ username: "theUser" })).body).to.include({ firstName: "Johnny", userStatus: 2 });
    expect((await user.loginUser({ username: "theUser", password: "67890" })).status).to.equal(200);
  });

  it("logoutUser with the session ends it: updateUser with it then gets 401", async function () {
    const token = await sessionOf("theUser", "67890");
    expect((await user.logoutUser({}, withSession(token))).status).to.equal(200);
    const reply = await settle(user.updateUser({ username: "theUser", body: { userStatus: 3 } }, withSession(token)));
    expect(reply.status).to.equal(401);
    expect((await user.getUserByName({ username: "theUser" })).body).to.include({ userStatus: 2 });
  });

  it("getUserByName of an unknown user gets 404, updateUser of another user 403; an invalid username gets 400", async function () {
    const missing = await settle(user.getUserByName({ username: "nobody" }));
    expect(missing.status).to.equal(404);
    expect(missing.body).to.have.nested.property("error.code", "USER_NOT_FOUND");
    const token = await sessionOf("theUser", "67890");
    const update = await settle(user.updateUser({ username: "nobody", body: { firstName: "x" } }, withSession(token)));
    expect(update.status).to.equal(403);
    expect(update.body).to.have.nested.property("error.code", "FORBIDDEN");
    const invalid = await settle(user.getUserByName({ username: "not valid!" }));
    expect(invalid.status).to.equal(400);
    expect(invalid.body).to.have.nested.property("error.code", "INVALID_USERNAME");
  });

  it("deleteUser with the user's session removes the user; another user's session gets 403", async function () {
    const others = await settle(
      user.deleteUser({ username: "list2" }, withSession(await sessionOf("list1", "pw-list1"))),
    );
    expect(others.status).to.equal(403);
    expect((await user.getUserByName({ username: "list2" })).status).to.equal(200);

    const reply = await user.deleteUser({ username: "list2" }, withSession(await sessionOf("list2", "pw-list2")));
    expect(reply.status).to.equal(200);
    expect(reply.body).to.deep.equal({ code: 200, type: "unknown", message: "list2" });
    expect((await settle(user.getUserByName({ username: "list2" }))).status).to.equal(404);
  });

  async function sessionOf(username: string, password: string): Promise<string> {
    const reply = await user.loginUser({ username, password });
    return SESSION_TOKEN.exec(reply.body as string)![1];
  }
});

describe("a client generated from the service's own OpenAPI document against /v2/user", function () {
  let dataDir: string;
  let store: UserStore;
  let server: UserServer;

  before(async function () {
    dataDir = await mkdtemp(path.join(tmpdir(), "users-openapi-client-"));
    store = await openUserStore({ dataDir });
    server = await startUserServer(store);
  });

  after(async function () {
    await server?.close();
    await store?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  const clientFor = async (authorizations?: Record<string, unknown>) => {
    const registry = new OpenAPIRegistry();
    registerUserOpenApi(registry);
    // As GET /openapi.json serves it: JSON text.
    const spec = JSON.parse(JSON.stringify(buildOpenApiDocument(registry, { serverUrl: server.baseUrl })));
    return (await SwaggerClient({ spec, authorizations })).apis.user;
  };

  for (const scheme of ["userSession", "api_key"]) {
    it(`knows that updateUser and deleteUser need the session, and sends it by the ${scheme} scheme`, async function () {
      const anonymous = await clientFor();
      const username = `generated-${scheme.replace("_", "-")}`;
      expect((await anonymous.createUser({}, { requestBody: { username, password: "pw-generated" } })).status).to.equal(
        200,
      );
      const token = SESSION_TOKEN.exec(
        (await anonymous.loginUser({ username, password: "pw-generated" })).body as string,
      )![1];
      expect(
        (await settle(anonymous.updateUser({ username }, { requestBody: { firstName: "Nope" } }))).status,
      ).to.equal(401);

      const signedIn = await clientFor({ [scheme]: token });
      const updated = await signedIn.updateUser({ username }, { requestBody: { firstName: "Gen" } });
      expect(updated.status).to.equal(200);
      expect((await signedIn.getUserByName({ username })).body).to.include({ firstName: "Gen" });
      expect((await signedIn.deleteUser({ username })).status).to.equal(200);
      expect((await settle(signedIn.getUserByName({ username }))).status).to.equal(404);
    });
  }
});
