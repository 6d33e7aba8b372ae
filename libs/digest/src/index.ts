// What other packages use, by name (a package that needs more adds it here).
export { compareCodePoints, pythonFloat, pythonJsonDumps } from './python-json';
export { bytesDigest, canonicalJson, EMPTY_TABLE_DIGEST, objectDigest, rowDigest, storageJson, strDigest, tableDigest } from './digest';
export { isLosslessNumber, LosslessNumber, parseLosslessJson, RawJson, toJsonText } from './lossless';
