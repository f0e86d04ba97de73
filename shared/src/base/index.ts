/** The base layer of @intake/shared, imported as '@intake/shared/base' (see .dependency-cruiser.cjs for what it may import). */
export * from './batch-queue';
export * from './blob-store';
export * from './config';
export * from './create-blob-store';
export * from './db';
export * from './logger';
export * from './mailer';
export * from './ordered-json';
export * from './secrets';
