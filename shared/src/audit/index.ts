/** The audit layer of @intake/shared, imported as '@intake/shared/audit' (see .dependency-cruiser.cjs for what it may import). */
export * from './audit';
