#!/usr/bin/env node
/**
 * Signing and the installed-files check: `node test/bench/signing.bench.mjs [--json] [--quick]` (after `npm run build`).
 *
 *   verify   what signing adds to one install, in process:
 *            - one version signature checked (ed25519, as plinth registries sign; ECDSA P-256, as npm's does),
 *            - the signed index of 1,000 plugins checked (its signature) and one packument's digest against it,
 *            - a whole `marketplace.install` of a small plugin from a signed registry (keys, index,
 *              signature, tree recorded) against the same plugin from an unsigned registry, fresh homes,
 *              alternating: medians and the difference per install.
 *   tree     a 5 MB plugin of 500 files: recording its tree at install (every file hashed), and the
 *            check before each load: the fast path (size, mtime and ctime unchanged: one stat per file)
 *            and a full rehash (every file read); the baselines, in the same process: a bare walk with one
 *            stat per file, and what the trust plugin's fingerprint of the same folder costs, reading every
 *            file and from the hashes its lock entry recorded (recorded-hashes.ts).
 *
 * Nothing is asserted; the exit code is 0 unless the benchmark itself breaks.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { lstat, readdir } from 'node:fs/promises';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Kernel } from '../../dist/kernel/index.js';
import { publishPlugin } from '../../dist/registry/publish.js';
import { serveRegistry } from '../../dist/registry/server.js';
import { signDocument, signVersion, signingKey } from '../../dist/registry/signing.js';
import { checkVersionSignatures, publicKeyOf } from '../../dist/internal/registry/signatures.js';
import { documentSigner, packumentDigest } from '../../dist/internal/registry/trust.js';
import { checkTree, hashTree } from '../../dist/internal/registry/installed-tree.js';
import { fileState } from '../../dist/plugins/trust/fingerprint.js';
import { installedLock, recordedHashes } from '../../dist/plugins/trust/recorded-hashes.js';
import { benchOptions, median, timed } from './support.mjs';

const { json: JSON_OUT, quick: QUICK } = benchOptions('signing.bench');
const N = QUICK ? 50 : 2_000;
const ROUNDS = QUICK ? 1 : 7;
const TREE_ROUNDS = QUICK ? 2 : 20;
const base = mkdtempSync(path.join(os.tmpdir(), 'plinth-bench-signing-'));
const round2 = (x) => Math.round(x * 100) / 100;
const quiet = { health: { enabled: false }, 'mcp-demo': { enabled: false } };

function perCall(fn, n) {
  for (let i = 0; i < Math.min(50, n); i++) fn(i); // warm up
  const start = performance.now();
  for (let i = 0; i < n; i++) fn(i);
  return ((performance.now() - start) / n) * 1000; // µs
}

function trusted(key) {
  return new Map([[key.keyid, publicKeyOf({ keyid: key.keyid, key: key.publicKey })]]);
}

function signatureFigures() {
  const ed = signingKey(generateKeyPairSync('ed25519').privateKey);
  const ec = signingKey(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey);
  const integrity = `sha512-${randomBytes(64).toString('base64')}`;
  const edDist = { integrity, signatures: [signVersion(ed, 'greeter', '1.0.0', integrity)] };
  const ecDist = { integrity, signatures: [signVersion(ec, 'greeter', '1.0.0', integrity)] };
  const edKeys = trusted(ed);
  const ecKeys = trusted(ec);
  const packuments = Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`plugin-${i}`, `sha256-${randomBytes(32).toString('base64')}`]));
  const index = signDocument(ed, { type: 'plinth-index', version: 7, expires: new Date(Date.now() + 86_400_000).toISOString(), packuments });
  const packument = { name: 'greeter', 'dist-tags': { latest: '1.9.0' }, versions: Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`1.${i}.0`, { dist: { integrity } }])) };
  return {
    ed25519VersionUs: round2(perCall(() => checkVersionSignatures(edKeys, 'greeter', '1.0.0', edDist), N)),
    ecdsaP256VersionUs: round2(perCall(() => checkVersionSignatures(ecKeys, 'greeter', '1.0.0', ecDist), N)),
    index1000VerifyUs: round2(perCall(() => documentSigner(index, edKeys), QUICK ? 10 : 200)),
    packumentDigest20VersionsUs: round2(perCall(() => packumentDigest(packument), N)),
  };
}

function writeSmallPlugin(dir) {
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify({ name: 'small', version: '1.0.0', kernel: '^1.0.0', main: './index.js' }));
  writeFileSync(path.join(dir, 'index.js'), 'export default { setup() {} };\n');
  return dir;
}

async function installOnce(url, registry) {
  const home = mkdtempSync(path.join(base, 'home-'));
  mkdirSync(path.join(home, 'workspace'));
  writeFileSync(path.join(home, 'settings.json'), JSON.stringify({ registries: [{ name: 'local', url, ...registry }], plugins: quiet }));
  const kernel = new Kernel({ home, workspace: path.join(home, 'workspace'), builtin: true, env: {} });
  await kernel.boot();
  try {
    const market = await kernel.get('marketplace');
    const start = performance.now();
    await market.install('small', { yes: true });
    return performance.now() - start;
  } finally {
    await kernel.shutdown();
  }
}

async function installFigures() {
  const source = writeSmallPlugin(path.join(base, 'small'));
  const key = signingKey(generateKeyPairSync('ed25519').privateKey);
  const signedFolder = path.join(base, 'registry-signed');
  const plainFolder = path.join(base, 'registry-plain');
  await publishPlugin(signedFolder, source, { signingKey: key });
  await publishPlugin(plainFolder, source);
  const signed = await serveRegistry(signedFolder);
  const plain = await serveRegistry(plainFolder);
  const times = { signed: [], plain: [] };
  try {
    await installOnce(plain.url, {}); // warm up both paths
    await installOnce(signed.url, { keys: [key.keyid] });
    for (let r = 0; r < ROUNDS; r++) {
      times.plain.push(await installOnce(plain.url, {}));
      times.signed.push(await installOnce(signed.url, { keys: [key.keyid] }));
    }
  } finally {
    await signed.close();
    await plain.close();
  }
  const s = median(times.signed);
  const p = median(times.plain);
  return { rounds: ROUNDS, unsignedInstallMs: round2(p), signedInstallMs: round2(s), signingAddsMs: round2(s - p), ratioSignedOverUnsigned: round2(s / p) };
}

async function bareWalk(dir) {
  const folders = [dir];
  let files = 0;
  for (let folder = folders.pop(); folder !== undefined; folder = folders.pop()) {
    for (const entry of await readdir(folder, { withFileTypes: true })) {
      const p = path.join(folder, entry.name);
      if (entry.isDirectory()) folders.push(p);
      else {
        await lstat(p);
        files++;
      }
    }
  }
  return files;
}

async function treeFigures() {
  // In a version folder of a plinth home with a lock entry, as an install leaves it: trust can use the recorded hashes.
  const home = path.join(base, 'tree-home');
  const dir = path.join(home, 'plugins', '.versions', 'tree@1.0.0');
  for (let f = 0; f < 500; f++) {
    const sub = path.join(dir, `part-${f % 20}`);
    mkdirSync(sub, { recursive: true });
    writeFileSync(path.join(sub, `file-${f}.bin`), randomBytes(10_000));
  }
  const recorded = await hashTree(dir);
  const check = await checkTree(dir, recorded);
  if (!check.ok) throw new Error('the tree check failed on an unchanged tree');
  const walk = await timed(() => bareWalk(dir), TREE_ROUNDS);
  const paths = Object.keys(recorded.files).map((p) => path.join(dir, p));
  const entry = { name: 'tree', version: '1.0.0', integrity: 'sha512-x', range: '1.0.0', registry: 'bench', resolved: 'bench', installedAt: new Date().toISOString(), tree: recorded };
  writeFileSync(path.join(home, 'plugins.lock.json'), JSON.stringify({ lockfileVersion: 1, plugins: { tree: entry } }));
  const fingerprint = await timed(async () => {
    for (const file of paths) await fileState(file);
  }, TREE_ROUNDS);
  const lock = installedLock(home);
  const fingerprintRecorded = await timed(async () => {
    const hashes = recordedHashes(lock);
    for (const file of paths) await fileState(file, hashes);
  }, TREE_ROUNDS);
  const record = await timed(() => hashTree(dir), TREE_ROUNDS);
  const fast = await timed(() => checkTree(dir, recorded), TREE_ROUNDS);
  const full = await timed(() => checkTree(dir, recorded, { full: true }), TREE_ROUNDS);
  return {
    files: Object.keys(recorded.files).length,
    megabytes: 5,
    bareWalkMs: round2(walk),
    trustFingerprintMs: round2(fingerprint),
    trustFingerprintRecordedMs: round2(fingerprintRecorded),
    recordAtInstallMs: round2(record),
    fastPathMs: round2(fast),
    fullRehashMs: round2(full),
    ratioFastOverWalk: round2(fast / walk),
    ratioFullOverFast: round2(full / fast),
    ratioFastOverFingerprint: round2(fast / fingerprint),
    ratioFingerprintOverRecorded: round2(fingerprint / fingerprintRecorded),
  };
}

try {
  const result = { signatures: signatureFigures(), install: await installFigures(), tree: await treeFigures() };
  if (JSON_OUT) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  else {
    const s = result.signatures;
    const i = result.install;
    const t = result.tree;
    console.log('signing.bench');
    console.log(`  version signature   ed25519 ${s.ed25519VersionUs} µs, ECDSA P-256 ${s.ecdsaP256VersionUs} µs per check`);
    console.log(`  signed index        1,000 plugins: ${s.index1000VerifyUs} µs to verify; packument digest (20 versions) ${s.packumentDigest20VersionsUs} µs`);
    console.log(`  install (in process) unsigned ${i.unsignedInstallMs} ms, signed ${i.signedInstallMs} ms: signing adds ${i.signingAddsMs} ms (×${i.ratioSignedOverUnsigned}), median of ${i.rounds}`);
    console.log(`  tree, ${t.files} files / ${t.megabytes} MB: record at install ${t.recordAtInstallMs} ms; check before load: fast path ${t.fastPathMs} ms, full rehash ${t.fullRehashMs} ms (bare walk + stat ${t.bareWalkMs} ms, trust's fingerprint reading every file ${t.trustFingerprintMs} ms, from the recorded hashes ${t.trustFingerprintRecordedMs} ms (×${t.ratioFingerprintOverRecorded}); fast/walk ×${t.ratioFastOverWalk}, fast/fingerprint ×${t.ratioFastOverFingerprint}, full/fast ×${t.ratioFullOverFast})`);
  }
} finally {
  rmSync(base, { recursive: true, force: true });
}
