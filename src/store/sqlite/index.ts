export { openSqliteStore, SqliteStore, SQLITE_BUSY_TIMEOUT_MS, IN_MEMORY_PATH, type SqliteStoreOptions } from './store.ts';
export { LATEST_SCHEMA_VERSION, SchemaTooNewError } from './migrations.ts';
