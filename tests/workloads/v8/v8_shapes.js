// build: none (JavaScript, run with the installed node: no flags)
// Frames that are not plain named functions, each spinning in its own case:
//   node v8_shapes.js SECONDS classes  main -> (anonymous) -> Ring.spin -> area
//                                      (Shape's scope keeps nothing: V8 records no class
//                                      for area; spin uses Ring: V8 records Ring)
//   node v8_shapes.js SECONDS worker   a worker_threads worker: workerMain -> workerLeaf
//   node v8_shapes.js SECONDS async    asyncMain -> asyncStep -> asyncLeaf: an async
//                                      function's synchronous part (before its await)
//                                      (the main thread waits in the event loop)
//   node v8_shapes.js SECONDS deopt    polyLeaf deoptimized over and over (types change)
//   node v8_shapes.js SECONDS gc       allocLeaf allocating (young and old GC)
//   node v8_shapes.js SECONDS addon LIB  addonMain -> (C: addon_call_back ->
//                                      addon_inner) -> jsLeaf, LIB the addon
//                                      tests/workloads/lib/v8_addon.c
// Prints "ready" when the case runs.
'use strict';
const seconds = Number(process.argv[2] || 5);
const mode = process.argv[3] || 'classes';
const { Worker, isMainThread, parentPort } = require('worker_threads');

class Shape {
  area(n) {
    if (n < 0) { n+=n*1;n+=n*2;n+=n*3;n+=n*4;n+=n*5;n+=n*6;n+=n*7;n+=n*8;n+=n*9;n+=n*10;n+=n*11;n+=n*12;n+=n*13;n+=n*14;n+=n*15;n+=n*16;n+=n*17;n+=n*18;n+=n*19;n+=n*20;n+=n*21;n+=n*22;n+=n*23;n+=n*24;n+=n*25;n+=n*26;n+=n*27;n+=n*28;n+=n*29;n+=n*30;n+=n*31;n+=n*32;n+=n*33;n+=n*34;n+=n*35;n+=n*36;n+=n*37;n+=n*38;n+=n*39;n+=n*40;n+=n*41;n+=n*42;n+=n*43;n+=n*44;n+=n*45;n+=n*46;n+=n*47;n+=n*48;n+=n*49;n+=n*50;n+=n*51;n+=n*52;n+=n*53;n+=n*54;n+=n*55;n+=n*56;n+=n*57;n+=n*58;n+=n*59;n+=n*60;n+=n*61;n+=n*62;n+=n*63;n+=n*64;n+=n*65;n+=n*66;n+=n*67;n+=n*68;n+=n*69;n+=n*70;n+=n*71;n+=n*72;n+=n*73;n+=n*74;n+=n*75;n+=n*76;n+=n*77;n+=n*78;n+=n*79;n+=n*80;n+=n*81;n+=n*82;n+=n*83;n+=n*84;n+=n*85;n+=n*86;n+=n*87;n+=n*88;n+=n*89;n+=n*90;n+=n*91;n+=n*92;n+=n*93;n+=n*94;n+=n*95;n+=n*96;n+=n*97;n+=n*98;n+=n*99;n+=n*100;n+=n*101;n+=n*102;n+=n*103;n+=n*104;n+=n*105;n+=n*106;n+=n*107;n+=n*108;n+=n*109;n+=n*110;n+=n*111;n+=n*112;n+=n*113;n+=n*114;n+=n*115;n+=n*116;n+=n*117;n+=n*118;n+=n*119;n+=n*120; } // pad: never inlined
    let s = 0;
    for (let i = 0; i < n; i++) s += Math.sqrt(i) * 1.0001; // line: Shape.area spins
    return s;
  }
}

// Ring.spin refers to Ring: V8 keeps the class's scope (a context), and so
// names the method's class.
class Ring {
  spin(shape, n) {
    if (n < 0) { n+=n*1;n+=n*2;n+=n*3;n+=n*4;n+=n*5;n+=n*6;n+=n*7;n+=n*8;n+=n*9;n+=n*10;n+=n*11;n+=n*12;n+=n*13;n+=n*14;n+=n*15;n+=n*16;n+=n*17;n+=n*18;n+=n*19;n+=n*20;n+=n*21;n+=n*22;n+=n*23;n+=n*24;n+=n*25;n+=n*26;n+=n*27;n+=n*28;n+=n*29;n+=n*30;n+=n*31;n+=n*32;n+=n*33;n+=n*34;n+=n*35;n+=n*36;n+=n*37;n+=n*38;n+=n*39;n+=n*40;n+=n*41;n+=n*42;n+=n*43;n+=n*44;n+=n*45;n+=n*46;n+=n*47;n+=n*48;n+=n*49;n+=n*50;n+=n*51;n+=n*52;n+=n*53;n+=n*54;n+=n*55;n+=n*56;n+=n*57;n+=n*58;n+=n*59;n+=n*60;n+=n*61;n+=n*62;n+=n*63;n+=n*64;n+=n*65;n+=n*66;n+=n*67;n+=n*68;n+=n*69;n+=n*70;n+=n*71;n+=n*72;n+=n*73;n+=n*74;n+=n*75;n+=n*76;n+=n*77;n+=n*78;n+=n*79;n+=n*80;n+=n*81;n+=n*82;n+=n*83;n+=n*84;n+=n*85;n+=n*86;n+=n*87;n+=n*88;n+=n*89;n+=n*90;n+=n*91;n+=n*92;n+=n*93;n+=n*94;n+=n*95;n+=n*96;n+=n*97;n+=n*98;n+=n*99;n+=n*100;n+=n*101;n+=n*102;n+=n*103;n+=n*104;n+=n*105;n+=n*106;n+=n*107;n+=n*108;n+=n*109;n+=n*110;n+=n*111;n+=n*112;n+=n*113;n+=n*114;n+=n*115;n+=n*116;n+=n*117;n+=n*118;n+=n*119;n+=n*120; } // pad: never inlined
    return shape.area(n) + Ring.turns; // line: Ring.spin calls
  }
}
Ring.turns = 1;

function classesMain(end) {
  const shape = new Shape();
  const ring = new Ring();
  let t = 0;
  while (Date.now() < end)
    t += (function (n) {
    if (n < 0) { n+=n*1;n+=n*2;n+=n*3;n+=n*4;n+=n*5;n+=n*6;n+=n*7;n+=n*8;n+=n*9;n+=n*10;n+=n*11;n+=n*12;n+=n*13;n+=n*14;n+=n*15;n+=n*16;n+=n*17;n+=n*18;n+=n*19;n+=n*20;n+=n*21;n+=n*22;n+=n*23;n+=n*24;n+=n*25;n+=n*26;n+=n*27;n+=n*28;n+=n*29;n+=n*30;n+=n*31;n+=n*32;n+=n*33;n+=n*34;n+=n*35;n+=n*36;n+=n*37;n+=n*38;n+=n*39;n+=n*40;n+=n*41;n+=n*42;n+=n*43;n+=n*44;n+=n*45;n+=n*46;n+=n*47;n+=n*48;n+=n*49;n+=n*50;n+=n*51;n+=n*52;n+=n*53;n+=n*54;n+=n*55;n+=n*56;n+=n*57;n+=n*58;n+=n*59;n+=n*60;n+=n*61;n+=n*62;n+=n*63;n+=n*64;n+=n*65;n+=n*66;n+=n*67;n+=n*68;n+=n*69;n+=n*70;n+=n*71;n+=n*72;n+=n*73;n+=n*74;n+=n*75;n+=n*76;n+=n*77;n+=n*78;n+=n*79;n+=n*80;n+=n*81;n+=n*82;n+=n*83;n+=n*84;n+=n*85;n+=n*86;n+=n*87;n+=n*88;n+=n*89;n+=n*90;n+=n*91;n+=n*92;n+=n*93;n+=n*94;n+=n*95;n+=n*96;n+=n*97;n+=n*98;n+=n*99;n+=n*100;n+=n*101;n+=n*102;n+=n*103;n+=n*104;n+=n*105;n+=n*106;n+=n*107;n+=n*108;n+=n*109;n+=n*110;n+=n*111;n+=n*112;n+=n*113;n+=n*114;n+=n*115;n+=n*116;n+=n*117;n+=n*118;n+=n*119;n+=n*120; } // pad: never inlined
      return ring.spin(shape, n) + 1; // line: anonymous calls
    })(20000);
  return t;
}

function workerLeaf(n) {
  if (n < 0) { n+=n*1;n+=n*2;n+=n*3;n+=n*4;n+=n*5;n+=n*6;n+=n*7;n+=n*8;n+=n*9;n+=n*10;n+=n*11;n+=n*12;n+=n*13;n+=n*14;n+=n*15;n+=n*16;n+=n*17;n+=n*18;n+=n*19;n+=n*20;n+=n*21;n+=n*22;n+=n*23;n+=n*24;n+=n*25;n+=n*26;n+=n*27;n+=n*28;n+=n*29;n+=n*30;n+=n*31;n+=n*32;n+=n*33;n+=n*34;n+=n*35;n+=n*36;n+=n*37;n+=n*38;n+=n*39;n+=n*40;n+=n*41;n+=n*42;n+=n*43;n+=n*44;n+=n*45;n+=n*46;n+=n*47;n+=n*48;n+=n*49;n+=n*50;n+=n*51;n+=n*52;n+=n*53;n+=n*54;n+=n*55;n+=n*56;n+=n*57;n+=n*58;n+=n*59;n+=n*60;n+=n*61;n+=n*62;n+=n*63;n+=n*64;n+=n*65;n+=n*66;n+=n*67;n+=n*68;n+=n*69;n+=n*70;n+=n*71;n+=n*72;n+=n*73;n+=n*74;n+=n*75;n+=n*76;n+=n*77;n+=n*78;n+=n*79;n+=n*80;n+=n*81;n+=n*82;n+=n*83;n+=n*84;n+=n*85;n+=n*86;n+=n*87;n+=n*88;n+=n*89;n+=n*90;n+=n*91;n+=n*92;n+=n*93;n+=n*94;n+=n*95;n+=n*96;n+=n*97;n+=n*98;n+=n*99;n+=n*100;n+=n*101;n+=n*102;n+=n*103;n+=n*104;n+=n*105;n+=n*106;n+=n*107;n+=n*108;n+=n*109;n+=n*110;n+=n*111;n+=n*112;n+=n*113;n+=n*114;n+=n*115;n+=n*116;n+=n*117;n+=n*118;n+=n*119;n+=n*120; } // pad: never inlined
  let s = 0;
  for (let i = 0; i < n; i++) s += Math.cos(i) * 1.0001; // line: workerLeaf spins
  return s;
}

function workerMain(end) {
  let t = 0;
  while (Date.now() < end) t += workerLeaf(20000); // line: workerMain calls
  return t;
}

function polyLeaf(x, n) {
  if (n < 0) { n+=n*1;n+=n*2;n+=n*3;n+=n*4;n+=n*5;n+=n*6;n+=n*7;n+=n*8;n+=n*9;n+=n*10;n+=n*11;n+=n*12;n+=n*13;n+=n*14;n+=n*15;n+=n*16;n+=n*17;n+=n*18;n+=n*19;n+=n*20;n+=n*21;n+=n*22;n+=n*23;n+=n*24;n+=n*25;n+=n*26;n+=n*27;n+=n*28;n+=n*29;n+=n*30;n+=n*31;n+=n*32;n+=n*33;n+=n*34;n+=n*35;n+=n*36;n+=n*37;n+=n*38;n+=n*39;n+=n*40;n+=n*41;n+=n*42;n+=n*43;n+=n*44;n+=n*45;n+=n*46;n+=n*47;n+=n*48;n+=n*49;n+=n*50;n+=n*51;n+=n*52;n+=n*53;n+=n*54;n+=n*55;n+=n*56;n+=n*57;n+=n*58;n+=n*59;n+=n*60;n+=n*61;n+=n*62;n+=n*63;n+=n*64;n+=n*65;n+=n*66;n+=n*67;n+=n*68;n+=n*69;n+=n*70;n+=n*71;n+=n*72;n+=n*73;n+=n*74;n+=n*75;n+=n*76;n+=n*77;n+=n*78;n+=n*79;n+=n*80;n+=n*81;n+=n*82;n+=n*83;n+=n*84;n+=n*85;n+=n*86;n+=n*87;n+=n*88;n+=n*89;n+=n*90;n+=n*91;n+=n*92;n+=n*93;n+=n*94;n+=n*95;n+=n*96;n+=n*97;n+=n*98;n+=n*99;n+=n*100;n+=n*101;n+=n*102;n+=n*103;n+=n*104;n+=n*105;n+=n*106;n+=n*107;n+=n*108;n+=n*109;n+=n*110;n+=n*111;n+=n*112;n+=n*113;n+=n*114;n+=n*115;n+=n*116;n+=n*117;n+=n*118;n+=n*119;n+=n*120; } // pad: never inlined
  let s = 0;
  for (let i = 0; i < n; i++) s = s + x; // line: polyLeaf adds
  return s;
}

function deoptMain(end) {
  const values = [1, 'a', 1.5, {}, [1], null];
  let k = 0;
  while (Date.now() < end) polyLeaf(values[k++ % values.length], 2000);
}

function allocLeaf(n, old) {
  if (n < 0) { n+=n*1;n+=n*2;n+=n*3;n+=n*4;n+=n*5;n+=n*6;n+=n*7;n+=n*8;n+=n*9;n+=n*10;n+=n*11;n+=n*12;n+=n*13;n+=n*14;n+=n*15;n+=n*16;n+=n*17;n+=n*18;n+=n*19;n+=n*20;n+=n*21;n+=n*22;n+=n*23;n+=n*24;n+=n*25;n+=n*26;n+=n*27;n+=n*28;n+=n*29;n+=n*30;n+=n*31;n+=n*32;n+=n*33;n+=n*34;n+=n*35;n+=n*36;n+=n*37;n+=n*38;n+=n*39;n+=n*40;n+=n*41;n+=n*42;n+=n*43;n+=n*44;n+=n*45;n+=n*46;n+=n*47;n+=n*48;n+=n*49;n+=n*50;n+=n*51;n+=n*52;n+=n*53;n+=n*54;n+=n*55;n+=n*56;n+=n*57;n+=n*58;n+=n*59;n+=n*60;n+=n*61;n+=n*62;n+=n*63;n+=n*64;n+=n*65;n+=n*66;n+=n*67;n+=n*68;n+=n*69;n+=n*70;n+=n*71;n+=n*72;n+=n*73;n+=n*74;n+=n*75;n+=n*76;n+=n*77;n+=n*78;n+=n*79;n+=n*80;n+=n*81;n+=n*82;n+=n*83;n+=n*84;n+=n*85;n+=n*86;n+=n*87;n+=n*88;n+=n*89;n+=n*90;n+=n*91;n+=n*92;n+=n*93;n+=n*94;n+=n*95;n+=n*96;n+=n*97;n+=n*98;n+=n*99;n+=n*100;n+=n*101;n+=n*102;n+=n*103;n+=n*104;n+=n*105;n+=n*106;n+=n*107;n+=n*108;n+=n*109;n+=n*110;n+=n*111;n+=n*112;n+=n*113;n+=n*114;n+=n*115;n+=n*116;n+=n*117;n+=n*118;n+=n*119;n+=n*120; } // pad: never inlined
  const keep = [];
  let s = 0;
  for (let i = 0; i < n; i++) {
    keep.push({ i, s: 'x' + i, a: new Array(16) }); // line: allocLeaf
    for (let j = 0; j < 20; j++) s += Math.sqrt(i + j); // work between allocations
  }
  old.push(new Array(1 << 14)); // large objects, kept a while: old-generation GC
  if (old.length > 64) old.length = 0;
  return keep.length + s;
}

function gcMain(end) {
  let t = 0;
  const old = [];
  while (Date.now() < end) t += allocLeaf(20000, old);
  return t;
}

function jsLeaf() {
  let n = 20000;
  if (n < 0) { n+=n*1;n+=n*2;n+=n*3;n+=n*4;n+=n*5;n+=n*6;n+=n*7;n+=n*8;n+=n*9;n+=n*10;n+=n*11;n+=n*12;n+=n*13;n+=n*14;n+=n*15;n+=n*16;n+=n*17;n+=n*18;n+=n*19;n+=n*20;n+=n*21;n+=n*22;n+=n*23;n+=n*24;n+=n*25;n+=n*26;n+=n*27;n+=n*28;n+=n*29;n+=n*30;n+=n*31;n+=n*32;n+=n*33;n+=n*34;n+=n*35;n+=n*36;n+=n*37;n+=n*38;n+=n*39;n+=n*40;n+=n*41;n+=n*42;n+=n*43;n+=n*44;n+=n*45;n+=n*46;n+=n*47;n+=n*48;n+=n*49;n+=n*50;n+=n*51;n+=n*52;n+=n*53;n+=n*54;n+=n*55;n+=n*56;n+=n*57;n+=n*58;n+=n*59;n+=n*60;n+=n*61;n+=n*62;n+=n*63;n+=n*64;n+=n*65;n+=n*66;n+=n*67;n+=n*68;n+=n*69;n+=n*70;n+=n*71;n+=n*72;n+=n*73;n+=n*74;n+=n*75;n+=n*76;n+=n*77;n+=n*78;n+=n*79;n+=n*80;n+=n*81;n+=n*82;n+=n*83;n+=n*84;n+=n*85;n+=n*86;n+=n*87;n+=n*88;n+=n*89;n+=n*90;n+=n*91;n+=n*92;n+=n*93;n+=n*94;n+=n*95;n+=n*96;n+=n*97;n+=n*98;n+=n*99;n+=n*100;n+=n*101;n+=n*102;n+=n*103;n+=n*104;n+=n*105;n+=n*106;n+=n*107;n+=n*108;n+=n*109;n+=n*110;n+=n*111;n+=n*112;n+=n*113;n+=n*114;n+=n*115;n+=n*116;n+=n*117;n+=n*118;n+=n*119;n+=n*120; } // pad: never inlined
  let s = 0;
  for (let i = 0; i < n; i++) s += Math.sqrt(i) * 1.0001; // line: jsLeaf spins
  return s;
}

function addonMain(end, addon) {
  while (Date.now() < end) addon.callBack(jsLeaf, 10); // line: addonMain calls
}

// The synchronous part of async functions: asyncStep runs asyncLeaf before
// its first await; asyncMain, resumed after each await, calls it again.
function asyncLeaf(n) {
  if (n < 0) { n+=n*1;n+=n*2;n+=n*3;n+=n*4;n+=n*5;n+=n*6;n+=n*7;n+=n*8;n+=n*9;n+=n*10;n+=n*11;n+=n*12;n+=n*13;n+=n*14;n+=n*15;n+=n*16;n+=n*17;n+=n*18;n+=n*19;n+=n*20;n+=n*21;n+=n*22;n+=n*23;n+=n*24;n+=n*25;n+=n*26;n+=n*27;n+=n*28;n+=n*29;n+=n*30;n+=n*31;n+=n*32;n+=n*33;n+=n*34;n+=n*35;n+=n*36;n+=n*37;n+=n*38;n+=n*39;n+=n*40;n+=n*41;n+=n*42;n+=n*43;n+=n*44;n+=n*45;n+=n*46;n+=n*47;n+=n*48;n+=n*49;n+=n*50;n+=n*51;n+=n*52;n+=n*53;n+=n*54;n+=n*55;n+=n*56;n+=n*57;n+=n*58;n+=n*59;n+=n*60;n+=n*61;n+=n*62;n+=n*63;n+=n*64;n+=n*65;n+=n*66;n+=n*67;n+=n*68;n+=n*69;n+=n*70;n+=n*71;n+=n*72;n+=n*73;n+=n*74;n+=n*75;n+=n*76;n+=n*77;n+=n*78;n+=n*79;n+=n*80;n+=n*81;n+=n*82;n+=n*83;n+=n*84;n+=n*85;n+=n*86;n+=n*87;n+=n*88;n+=n*89;n+=n*90;n+=n*91;n+=n*92;n+=n*93;n+=n*94;n+=n*95;n+=n*96;n+=n*97;n+=n*98;n+=n*99;n+=n*100;n+=n*101;n+=n*102;n+=n*103;n+=n*104;n+=n*105;n+=n*106;n+=n*107;n+=n*108;n+=n*109;n+=n*110;n+=n*111;n+=n*112;n+=n*113;n+=n*114;n+=n*115;n+=n*116;n+=n*117;n+=n*118;n+=n*119;n+=n*120; } // pad: never inlined
  let s = 0;
  for (let i = 0; i < n; i++) s += Math.sin(i) * 1.0001; // line: asyncLeaf spins
  return s;
}

async function asyncStep(n) {
  if (n < 0) { n+=n*1;n+=n*2;n+=n*3;n+=n*4;n+=n*5;n+=n*6;n+=n*7;n+=n*8;n+=n*9;n+=n*10;n+=n*11;n+=n*12;n+=n*13;n+=n*14;n+=n*15;n+=n*16;n+=n*17;n+=n*18;n+=n*19;n+=n*20;n+=n*21;n+=n*22;n+=n*23;n+=n*24;n+=n*25;n+=n*26;n+=n*27;n+=n*28;n+=n*29;n+=n*30;n+=n*31;n+=n*32;n+=n*33;n+=n*34;n+=n*35;n+=n*36;n+=n*37;n+=n*38;n+=n*39;n+=n*40;n+=n*41;n+=n*42;n+=n*43;n+=n*44;n+=n*45;n+=n*46;n+=n*47;n+=n*48;n+=n*49;n+=n*50;n+=n*51;n+=n*52;n+=n*53;n+=n*54;n+=n*55;n+=n*56;n+=n*57;n+=n*58;n+=n*59;n+=n*60;n+=n*61;n+=n*62;n+=n*63;n+=n*64;n+=n*65;n+=n*66;n+=n*67;n+=n*68;n+=n*69;n+=n*70;n+=n*71;n+=n*72;n+=n*73;n+=n*74;n+=n*75;n+=n*76;n+=n*77;n+=n*78;n+=n*79;n+=n*80;n+=n*81;n+=n*82;n+=n*83;n+=n*84;n+=n*85;n+=n*86;n+=n*87;n+=n*88;n+=n*89;n+=n*90;n+=n*91;n+=n*92;n+=n*93;n+=n*94;n+=n*95;n+=n*96;n+=n*97;n+=n*98;n+=n*99;n+=n*100;n+=n*101;n+=n*102;n+=n*103;n+=n*104;n+=n*105;n+=n*106;n+=n*107;n+=n*108;n+=n*109;n+=n*110;n+=n*111;n+=n*112;n+=n*113;n+=n*114;n+=n*115;n+=n*116;n+=n*117;n+=n*118;n+=n*119;n+=n*120; } // pad: never inlined
  const s = asyncLeaf(n); // line: asyncStep calls
  await null;
  return s;
}

async function asyncMain(end) {
  let t = 0;
  while (Date.now() < end) t += await asyncStep(20000); // line: asyncMain calls
  return t;
}

if (!isMainThread) {
  parentPort.postMessage('ready');
  workerMain(Date.now() + seconds * 1000);
} else if (mode === 'worker') {
  const w = new Worker(__filename, { argv: [String(seconds), 'worker'] });
  w.on('message', () => process.stdout.write('ready\n'));
} else {
  const end = Date.now() + seconds * 1000;
  process.stdout.write('ready\n');
  if (mode === 'classes') classesMain(end);
  else if (mode === 'async') asyncMain(end);
  else if (mode === 'addon') {
    const addon = { exports: {} };
    process.dlopen(addon, process.argv[4]);
    addonMain(end, addon.exports);
  }
  else if (mode === 'deopt') deoptMain(end);
  else gcMain(end);
}
