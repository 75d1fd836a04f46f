import { Client } from 'pg';

/**
 * The bytes of the rows that tables of `schema` keep for `key` in a column of `columns`, as
 * PostgreSQL stores them (`pg_column_size` of each row: compressed and TOASTed values at their
 * stored size), summed over every table that has such a column.
 */
export async function rowBytes(url: string, schema: string, columns: string[], key: string): Promise<number> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const found = await client.query<{ table_name: string; column_name: string }>(
      'SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = $1 AND column_name = ANY($2)',
      [schema, columns],
    );
    let bytes = 0;
    for (const { table_name: table, column_name: column } of found.rows) {
      const sum = await client.query<{ bytes: string | null }>(
        `SELECT sum(pg_column_size(t.*))::text AS bytes FROM "${schema}"."${table}" t WHERE "${column}" = $1`,
        [key],
      );
      bytes += Number(sum.rows[0]?.bytes ?? 0);
    }
    return bytes;
  } finally {
    await client.end();
  }
}
