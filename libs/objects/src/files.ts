import { conflict, notFound } from '@weft/core';
import { bytesDigest } from '@weft/digest';
import { Params } from '@weft/query';
import type { Store } from '@weft/store';

/** The reference's FILE_CHUNK_SIZE. */
export const FILE_CHUNK_BYTES = 100_000;

/**
 * /file/create: the digest is the reference's bytes digest of the content (so an op's
 * `files: {"obj.py": <digest>}` matches what the SDK computed); storing the same content again
 * is a no-op. All chunks go in one insert: a file is either whole or absent.
 */
export async function createFile(
  store: Store,
  projectId: string,
  name: string,
  content: Buffer,
  expectedDigest?: string | null,
): Promise<{ digest: string }> {
  const digest = bytesDigest(content);
  if (expectedDigest && expectedDigest !== digest)
    throw conflict(`Client file '${name}' digest ${expectedDigest} != server digest ${digest}`);
  const n = Math.max(1, Math.ceil(content.length / FILE_CHUNK_BYTES));
  const rows = [];
  for (let i = 0; i < n; i++) {
    const chunk = content.subarray(i * FILE_CHUNK_BYTES, (i + 1) * FILE_CHUNK_BYTES);
    rows.push({
      project_id: projectId,
      digest,
      chunk_index: i,
      n_chunks: n,
      name,
      val_base64: chunk.toString('base64'),
      size_bytes: content.length,
    });
  }
  await store.insertRows('files', rows, { name: 'files.createFile' });
  return { digest };
}

/** /file/content: the bytes of a stored file, or 404. */
export async function readFile(store: Store, projectId: string, digest: string): Promise<Buffer> {
  const p = new Params();
  const chunks = await store.rows<{ chunk_index: number; n_chunks: number; val_base64: string }>(
    `SELECT chunk_index, any(n_chunks) AS n_chunks, any(val_base64) AS val_base64 FROM files
      WHERE project_id = ${p.str(projectId)} AND digest = ${p.str(digest)} GROUP BY chunk_index ORDER BY chunk_index`,
    p.values,
    { name: 'files.readFile' },
  );
  if (chunks.length === 0 || chunks.length !== Number(chunks[0]!.n_chunks)) throw notFound(`File ${digest} not found`);
  return Buffer.concat(chunks.map((c) => Buffer.from(c.val_base64, 'base64')));
}

/** The bytes of several stored files in one query, by digest; a missing or incomplete file is absent. */
export async function readFiles(store: Store, projectId: string, digests: string[]): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  if (digests.length === 0) return out;
  const p = new Params();
  const chunkRows = await store.rows<{ digest: string; chunk_index: number; n_chunks: number; val_base64: string }>(
    `SELECT digest, chunk_index, any(n_chunks) AS n_chunks, any(val_base64) AS val_base64 FROM files
      WHERE project_id = ${p.str(projectId)} AND digest IN ${p.strArray([...new Set(digests)])}
      GROUP BY digest, chunk_index ORDER BY digest, chunk_index`,
    p.values,
    { name: 'files.readFiles' },
  );
  const chunks = new Map<string, { n: number; parts: string[] }>();
  for (const c of chunkRows) {
    const file = chunks.get(c.digest) ?? { n: Number(c.n_chunks), parts: [] };
    file.parts.push(c.val_base64);
    chunks.set(c.digest, file);
  }
  for (const [digest, f] of chunks)
    if (f.parts.length === f.n) out.set(digest, Buffer.concat(f.parts.map((b) => Buffer.from(b, 'base64'))));
  return out;
}

/** /files/stats: the bytes of the project's stored files, each file counted once. */
export async function filesStats(store: Store, projectId: string): Promise<{ total_size_bytes: number }> {
  const p = new Params();
  const [row] = await store.rows<{ total: number | string }>(
    `SELECT toInt64(sum(size)) AS total FROM (
      SELECT any(size_bytes) AS size FROM files WHERE project_id = ${p.str(projectId)} GROUP BY digest)`,
    p.values,
    { name: 'files.filesStats' },
  );
  return { total_size_bytes: Number(row?.total ?? 0) };
}

/** A scalar subquery: the stored bytes of a project's files, each file once. */
export const filesStorageBytesSql = (pid: string) =>
  `SELECT sum(size) FROM (SELECT any(size_bytes) AS size FROM files WHERE project_id = ${pid} GROUP BY digest)`;
