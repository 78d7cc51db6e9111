/**
 * Throw-away certificates for unit tests, made with the openssl CLI (as the local control plane's PKI
 * is): CAs, intermediates and client leaves with chosen CNs and extended key usages.
 */
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

export class TestPki {
  readonly dir = mkdtempSync(path.join(tmpdir(), 'nodeload-pki-'));
  private readonly pems = new Map<string, string>();

  private openssl(args: string[]): void {
    execFileSync('openssl', args, { cwd: this.dir, stdio: 'pipe' });
  }

  /** A self-signed CA, or one signed by `issuer` (an intermediate). */
  ca(name: string, issuer?: string): string {
    if (issuer)
      return this.leaf(
        name,
        name,
        issuer,
        'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign,digitalSignature\n',
      );
    this.openssl([
      'req',
      '-x509',
      ...EC,
      '-days',
      '2',
      '-subj',
      `/CN=${name}`,
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.crt`,
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign,digitalSignature',
    ]);
    return this.read(name);
  }

  /**
   * A certificate for `cn` (or a whole subject starting with "/": "/CN=alice/O=dev/O=ops") signed by
   * `issuer`; client authentication unless `ext` says otherwise.
   */
  leaf(name: string, cn: string, issuer: string, ext = 'extendedKeyUsage=clientAuth\n'): string {
    const subject = cn.startsWith('/') ? cn : `/CN=${cn}`;
    this.openssl(['req', ...EC, '-subj', subject, '-keyout', `${name}.key`, '-out', `${name}.csr`]);
    writeFileSync(path.join(this.dir, `${name}.ext`), ext);
    this.openssl([
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      `${issuer}.crt`,
      '-CAkey',
      `${issuer}.key`,
      '-CAcreateserial',
      '-days',
      '1',
      '-out',
      `${name}.crt`,
      '-extfile',
      `${name}.ext`,
    ]);
    return this.read(name);
  }

  pem(name: string): string {
    const pem = this.pems.get(name);
    if (!pem) throw new Error(`no certificate ${name}`);
    return pem;
  }

  cert(name: string): X509Certificate {
    return new X509Certificate(this.pem(name));
  }

  dispose(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }

  private read(name: string): string {
    const pem = readFileSync(path.join(this.dir, `${name}.crt`), 'utf8');
    this.pems.set(name, pem);
    return pem;
  }
}
