// SPDX-License-Identifier: Apache-2.0
// A busy JavaScript workload for the benchmarks: DEPTH nested JavaScript
// calls (one function, too big to be inlined, so each level is a frame of its
// own once TurboFan compiled it), then a loop of arithmetic until SECONDS
// have passed. Prints "ready" once running.
//   node v8_loop.js SECONDS DEPTH
'use strict';
const seconds = Number(process.argv[2] || 10);
const depth = Number(process.argv[3] || 40);

function spin(n) {
  let s = 0;
  for (let i = 0; i < n; i++) s += Math.sqrt(i) * 1.0001;
  return s;
}

function level(d, end) {
  if (d < 0) { d+=d*1;d+=d*2;d+=d*3;d+=d*4;d+=d*5;d+=d*6;d+=d*7;d+=d*8;d+=d*9;d+=d*10;d+=d*11;d+=d*12;d+=d*13;d+=d*14;d+=d*15;d+=d*16;d+=d*17;d+=d*18;d+=d*19;d+=d*20;d+=d*21;d+=d*22;d+=d*23;d+=d*24;d+=d*25;d+=d*26;d+=d*27;d+=d*28;d+=d*29;d+=d*30;d+=d*31;d+=d*32;d+=d*33;d+=d*34;d+=d*35;d+=d*36;d+=d*37;d+=d*38;d+=d*39;d+=d*40;d+=d*41;d+=d*42;d+=d*43;d+=d*44;d+=d*45;d+=d*46;d+=d*47;d+=d*48;d+=d*49;d+=d*50;d+=d*51;d+=d*52;d+=d*53;d+=d*54;d+=d*55;d+=d*56;d+=d*57;d+=d*58;d+=d*59;d+=d*60;d+=d*61;d+=d*62;d+=d*63;d+=d*64;d+=d*65;d+=d*66;d+=d*67;d+=d*68;d+=d*69;d+=d*70;d+=d*71;d+=d*72;d+=d*73;d+=d*74;d+=d*75;d+=d*76;d+=d*77;d+=d*78;d+=d*79;d+=d*80;d+=d*81;d+=d*82;d+=d*83;d+=d*84;d+=d*85;d+=d*86;d+=d*87;d+=d*88;d+=d*89;d+=d*90;d+=d*91;d+=d*92;d+=d*93;d+=d*94;d+=d*95;d+=d*96;d+=d*97;d+=d*98;d+=d*99;d+=d*100;d+=d*101;d+=d*102;d+=d*103;d+=d*104;d+=d*105;d+=d*106;d+=d*107;d+=d*108;d+=d*109;d+=d*110;d+=d*111;d+=d*112;d+=d*113;d+=d*114;d+=d*115;d+=d*116;d+=d*117;d+=d*118;d+=d*119;d+=d*120; } // pad: never inlined
  if (d <= 1) {
    let t = 0;
    while (Date.now() < end) t += spin(20000);
    return t;
  }
  return level(d - 1, end) + 1;
}

// Warm up (optimized code for every level), then report and run.
for (let i = 0; i < 200; i++) level(depth, 0);
process.stdout.write('ready\n');
level(depth, Date.now() + seconds * 1000);
