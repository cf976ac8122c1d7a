/** What the typed client program (client.ts) takes and answers; no generated type in here. */
export interface TypedClientOptions {
  baseUrl: string;
  /** The caller: a funded key, owner of the collection the program deploys. */
  privateKey: string;
  /** Another address: the receiver of mintForFree and the whitelisted one. */
  receiver: string;
  /** The API_KEY withdraw needs. */
  apiKey: string;
}

/** One call of the program: the operation, the HTTP status, and the body the typed client read. */
export interface TypedCall {
  operation: string;
  status: number;
  body: unknown;
}

export interface TypedClientProgram {
  driveEveryNftOperation(options: TypedClientOptions): Promise<TypedCall[]>;
  driveEditions(options: TypedClientOptions): Promise<TypedCall[]>;
}
