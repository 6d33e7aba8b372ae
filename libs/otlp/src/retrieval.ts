import { getPath } from './attributes';
import { isObject, type Loose } from './values';

/** OpenInference retriever output, `retrieval.documents[].document.{id, content, score, metadata}`, as plain documents. */
export function retrievalDocuments(tree: Loose): Loose[] | null {
  const list = getPath(tree, 'retrieval.documents');
  if (!Array.isArray(list)) return null;
  const docs = list
    .map((d) => (isObject(d) && isObject(d.document) ? d.document : isObject(d) ? d : null))
    .filter((d): d is Loose => d !== null)
    .map((d) => {
      const doc: Loose = {};
      for (const k of ['id', 'content', 'score', 'metadata']) if (d[k] !== undefined) doc[k] = d[k];
      return doc;
    });
  return docs.length > 0 ? docs : null;
}
