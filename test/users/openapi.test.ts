import { expect } from "chai";
import { OpenAPIRegistry, buildOpenApiDocument } from "../../server/http/openapi";
import { registerUserOpenApi } from "../../server/users";

describe("OpenAPI document of /v2/user", function () {
  const registry = new OpenAPIRegistry();
  registerUserOpenApi(registry);
  const doc = buildOpenApiDocument(registry);

  it("documents every Petstore user operation under its Petstore operationId", function () {
    const operations = Object.entries(doc.paths ?? {}).flatMap(([path, item]) =>
      Object.entries(item as Record<string, { operationId?: string }>).map(
        ([method, op]) => `${method.toUpperCase()} ${path} ${op.operationId}`,
      ),
    );
    expect(operations).to.have.members([
      "POST /v2/user createUser",
      "POST /v2/user/createWithList createUsersWithListInput",
      "POST /v2/user/createWithArray createUsersWithArrayInput",
      "GET /v2/user/login loginUser",
      "GET /v2/user/logout logoutUser",
      "GET /v2/user/{username} getUserByName",
      "PUT /v2/user/{username} updateUser",
      "DELETE /v2/user/{username} deleteUser",
    ]);
  });

  it("describes the response User without a password and with a string id", function () {
    const user = doc.components?.schemas?.User as { properties: Record<string, { type?: string }> };
    expect(user.properties).to.not.have.property("password");
    expect(user.properties.id.type).to.equal("string");
  });

  it("declares that PUT and DELETE /v2/user/{username} need a session, by Bearer or Petstore's api_key header", function () {
    const schemes = doc.components?.securitySchemes;
    expect(schemes?.userSession).to.deep.include({ type: "http", scheme: "bearer" });
    expect(schemes?.api_key).to.deep.include({ type: "apiKey", in: "header", name: "api_key" });
    const item = doc.paths?.["/v2/user/{username}"] as Record<string, { security?: unknown; responses: object }>;
    for (const method of ["put", "delete"]) {
      expect(item[method].security, method).to.deep.equal([{ userSession: [] }, { api_key: [] }]);
      expect(item[method].responses, method).to.include.keys("401", "403");
    }
    expect(item.get.security).to.equal(undefined);
    const logout = (doc.paths?.["/v2/user/logout"] as Record<string, { security?: unknown }>).get;
    expect(logout.security).to.deep.equal([{}, { userSession: [] }, { api_key: [] }]);
  });
});
