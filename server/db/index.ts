/** The service's SQL layer: one driver interface over PGlite and PostgreSQL, and the migrations. */
export { SqlError, sanitizeDatabaseError } from "./errors";
export { copyText, isUniqueViolation, type CopyValue, type SqlDriver, type SqlExecutor } from "./driver";
export { openDatabase, type OpenDatabaseOptions } from "./open";
export { migrate, MIGRATIONS } from "./migrations";
