// build: none (JavaScript, run with the installed node: no flags)
// Inlining three deep: inlineHost is optimized by TurboFan with inlA,
// inlB and inlC (small, hot) inlined into it, so one JIT frame holds four
// functions: inlineMain -> inlineHost -> inlA -> inlB -> inlC.
//   node v8_inline.js SECONDS [inline]
// And Maglev's inlining (node --no-turbofan v8_inline.js SECONDS maglev):
// mgHost is compiled by Maglev with mgA and mgB (small) inlined into it;
// mgB calls mgLeaf (too big to inline), so the return address in mgHost's
// code is a call of the inlined mgB: mgMain -> mgHost -> mgA -> mgB -> mgLeaf.
// Prints "ready" when the chain runs.
'use strict';
const seconds = Number(process.argv[2] || 5);
const mode = process.argv[3] || 'inline';

function inlC(i) {
  return Math.sqrt(i) * 1.0001 + Math.sqrt(i + 1) * 0.9999; // line: inlC spins
}

function inlB(i) {
  return inlC(i) + 1; // line: inlB calls
}

function inlA(i) {
  return inlB(i) * 0.5; // line: inlA calls
}

function inlineHost(n) {
  if (n < 0) { n+=n*1;n+=n*2;n+=n*3;n+=n*4;n+=n*5;n+=n*6;n+=n*7;n+=n*8;n+=n*9;n+=n*10;n+=n*11;n+=n*12;n+=n*13;n+=n*14;n+=n*15;n+=n*16;n+=n*17;n+=n*18;n+=n*19;n+=n*20;n+=n*21;n+=n*22;n+=n*23;n+=n*24;n+=n*25;n+=n*26;n+=n*27;n+=n*28;n+=n*29;n+=n*30;n+=n*31;n+=n*32;n+=n*33;n+=n*34;n+=n*35;n+=n*36;n+=n*37;n+=n*38;n+=n*39;n+=n*40;n+=n*41;n+=n*42;n+=n*43;n+=n*44;n+=n*45;n+=n*46;n+=n*47;n+=n*48;n+=n*49;n+=n*50;n+=n*51;n+=n*52;n+=n*53;n+=n*54;n+=n*55;n+=n*56;n+=n*57;n+=n*58;n+=n*59;n+=n*60;n+=n*61;n+=n*62;n+=n*63;n+=n*64;n+=n*65;n+=n*66;n+=n*67;n+=n*68;n+=n*69;n+=n*70;n+=n*71;n+=n*72;n+=n*73;n+=n*74;n+=n*75;n+=n*76;n+=n*77;n+=n*78;n+=n*79;n+=n*80;n+=n*81;n+=n*82;n+=n*83;n+=n*84;n+=n*85;n+=n*86;n+=n*87;n+=n*88;n+=n*89;n+=n*90;n+=n*91;n+=n*92;n+=n*93;n+=n*94;n+=n*95;n+=n*96;n+=n*97;n+=n*98;n+=n*99;n+=n*100;n+=n*101;n+=n*102;n+=n*103;n+=n*104;n+=n*105;n+=n*106;n+=n*107;n+=n*108;n+=n*109;n+=n*110;n+=n*111;n+=n*112;n+=n*113;n+=n*114;n+=n*115;n+=n*116;n+=n*117;n+=n*118;n+=n*119;n+=n*120; } // pad: never inlined into inlineMain
  let s = 0;
  for (let i = 0; i < n; i++) s += inlA(i); // line: inlineHost calls
  return s;
}

function inlineMain() {
  const end = Date.now() + seconds * 1000;
  let t = 0;
  process.stdout.write('ready\n');
  while (Date.now() < end) t += inlineHost(20000); // line: inlineMain calls
  return t;
}

function mgLeaf(n) {
  if (n < 0) { n+=n*1;n+=n*2;n+=n*3;n+=n*4;n+=n*5;n+=n*6;n+=n*7;n+=n*8;n+=n*9;n+=n*10;n+=n*11;n+=n*12;n+=n*13;n+=n*14;n+=n*15;n+=n*16;n+=n*17;n+=n*18;n+=n*19;n+=n*20;n+=n*21;n+=n*22;n+=n*23;n+=n*24;n+=n*25;n+=n*26;n+=n*27;n+=n*28;n+=n*29;n+=n*30;n+=n*31;n+=n*32;n+=n*33;n+=n*34;n+=n*35;n+=n*36;n+=n*37;n+=n*38;n+=n*39;n+=n*40;n+=n*41;n+=n*42;n+=n*43;n+=n*44;n+=n*45;n+=n*46;n+=n*47;n+=n*48;n+=n*49;n+=n*50;n+=n*51;n+=n*52;n+=n*53;n+=n*54;n+=n*55;n+=n*56;n+=n*57;n+=n*58;n+=n*59;n+=n*60;n+=n*61;n+=n*62;n+=n*63;n+=n*64;n+=n*65;n+=n*66;n+=n*67;n+=n*68;n+=n*69;n+=n*70;n+=n*71;n+=n*72;n+=n*73;n+=n*74;n+=n*75;n+=n*76;n+=n*77;n+=n*78;n+=n*79;n+=n*80;n+=n*81;n+=n*82;n+=n*83;n+=n*84;n+=n*85;n+=n*86;n+=n*87;n+=n*88;n+=n*89;n+=n*90;n+=n*91;n+=n*92;n+=n*93;n+=n*94;n+=n*95;n+=n*96;n+=n*97;n+=n*98;n+=n*99;n+=n*100;n+=n*101;n+=n*102;n+=n*103;n+=n*104;n+=n*105;n+=n*106;n+=n*107;n+=n*108;n+=n*109;n+=n*110;n+=n*111;n+=n*112;n+=n*113;n+=n*114;n+=n*115;n+=n*116;n+=n*117;n+=n*118;n+=n*119;n+=n*120; } // pad: never inlined into inlineMain
  let s = 0;
  for (let k = 0; k < 200; k++) s += Math.sqrt(n + k) * 1.0001; // line: mgLeaf spins
  return s;
}

function mgB(i) {
  return mgLeaf(i) + 1; // line: mgB calls
}

function mgA(i) {
  return mgB(i) * 0.5; // line: mgA calls
}

function mgHost(n) {
  if (n < 0) { n+=n*1;n+=n*2;n+=n*3;n+=n*4;n+=n*5;n+=n*6;n+=n*7;n+=n*8;n+=n*9;n+=n*10;n+=n*11;n+=n*12;n+=n*13;n+=n*14;n+=n*15;n+=n*16;n+=n*17;n+=n*18;n+=n*19;n+=n*20;n+=n*21;n+=n*22;n+=n*23;n+=n*24;n+=n*25;n+=n*26;n+=n*27;n+=n*28;n+=n*29;n+=n*30;n+=n*31;n+=n*32;n+=n*33;n+=n*34;n+=n*35;n+=n*36;n+=n*37;n+=n*38;n+=n*39;n+=n*40;n+=n*41;n+=n*42;n+=n*43;n+=n*44;n+=n*45;n+=n*46;n+=n*47;n+=n*48;n+=n*49;n+=n*50;n+=n*51;n+=n*52;n+=n*53;n+=n*54;n+=n*55;n+=n*56;n+=n*57;n+=n*58;n+=n*59;n+=n*60;n+=n*61;n+=n*62;n+=n*63;n+=n*64;n+=n*65;n+=n*66;n+=n*67;n+=n*68;n+=n*69;n+=n*70;n+=n*71;n+=n*72;n+=n*73;n+=n*74;n+=n*75;n+=n*76;n+=n*77;n+=n*78;n+=n*79;n+=n*80;n+=n*81;n+=n*82;n+=n*83;n+=n*84;n+=n*85;n+=n*86;n+=n*87;n+=n*88;n+=n*89;n+=n*90;n+=n*91;n+=n*92;n+=n*93;n+=n*94;n+=n*95;n+=n*96;n+=n*97;n+=n*98;n+=n*99;n+=n*100;n+=n*101;n+=n*102;n+=n*103;n+=n*104;n+=n*105;n+=n*106;n+=n*107;n+=n*108;n+=n*109;n+=n*110;n+=n*111;n+=n*112;n+=n*113;n+=n*114;n+=n*115;n+=n*116;n+=n*117;n+=n*118;n+=n*119;n+=n*120; } // pad: never inlined into inlineMain
  let s = 0;
  for (let i = 0; i < n; i++) s += mgA(i); // line: mgHost calls
  return s;
}

function mgMain() {
  const end = Date.now() + seconds * 1000;
  let t = 0;
  process.stdout.write('ready\n');
  while (Date.now() < end) t += mgHost(2000); // line: mgMain calls
  return t;
}

if (mode === 'maglev') mgMain();
else inlineMain();
