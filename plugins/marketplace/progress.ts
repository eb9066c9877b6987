/** A download progress bar on stderr, drawn only when stderr is a terminal. */

/** A progress callback for `name`; `done()` clears the line. */
export function progressBar(stream: NodeJS.WriteStream = process.stderr): { update: (name: string, received: number, total: number | undefined) => void; done: () => void } {
  if (!stream.isTTY) return { update: () => undefined, done: () => undefined };
  let last = 0;
  let drawn = false;
  return {
    update(name, received, total) {
      const now = Date.now();
      if (now - last < 50 && received !== total) return;
      last = now;
      drawn = true;
      const width = 24;
      const mb = (n: number) => (n / 1_048_576).toFixed(1);
      const bar = total ? `[${'#'.repeat(Math.round((received / total) * width)).padEnd(width, '.')}] ${Math.floor((received / total) * 100)}% ${mb(received)}/${mb(total)} MB` : `${mb(received)} MB`;
      stream.write(`\r\x1b[2K${name.replace(/[^\x20-\x7e]/g, '?')} ${bar}`);
    },
    done() {
      if (drawn) stream.write('\r\x1b[2K');
      drawn = false;
    },
  };
}
