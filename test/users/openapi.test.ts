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
});
