// Node.js on worker threads, for scripts/real_programs.sh: code that V8
// compiles at run time (its JIT), run by several threads at once.
//
//   node workloads/node_workers.js THREADS FILE
//
// Cuts FILE into THREADS pieces; a worker thread per piece counts its
// words and hashes them (32-bit FNV-1a of each word, summed), and the main
// thread prints each piece's counts in order: the same output however the
// threads are scheduled.
'use strict';
const { Worker, isMainThread, parentPort, workerData } = require('worker_threads');
const fs = require('fs');

function countWords(bytes) {
  let words = 0, sum = 0, h = 0x811c9dc5, inWord = false;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i];
    const letter = (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
    if (letter) {
      h = Math.imul(h ^ c, 0x01000193) >>> 0;
      inWord = true;
    } else if (inWord) {
      words++;
      sum = (sum + h) >>> 0;
      h = 0x811c9dc5;
      inWord = false;
    }
  }
  if (inWord) {
    words++;
    sum = (sum + h) >>> 0;
  }
  return { words, sum };
}

if (isMainThread) {
  const threads = Number(process.argv[2]);
  const text = fs.readFileSync(process.argv[3]);
  if (!(threads >= 1)) throw new Error('usage: node_workers.js THREADS FILE');
  const results = new Array(threads);
  let done = 0;
  for (let k = 0; k < threads; k++) {
    // Pieces end at a space or newline, so that no word is cut in two.
    let start = Math.floor((text.length * k) / threads);
    let end = Math.floor((text.length * (k + 1)) / threads);
    while (start > 0 && start < text.length && text[start - 1] > 32) start++;
    while (end < text.length && text[end - 1] > 32) end++;
    const piece = text.subarray(Math.min(start, end), end);
    const worker = new Worker(__filename, { workerData: piece });
    worker.on('message', (r) => {
      results[k] = r;
      if (++done === threads) {
        for (const [i, x] of results.entries()) console.log(`piece ${i}: ${x.words} words, hash sum ${x.sum}`);
      }
    });
  }
} else {
  parentPort.postMessage(countWords(workerData));
}
