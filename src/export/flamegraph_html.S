/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The flame graph page template, linked into the binary so the exporter needs
 * no files at run time. flamegraph.c reads it between the two symbols.
 */
	.section .rodata
	.balign 16
	.globl flamegraph_html_start
	.type flamegraph_html_start, @object
flamegraph_html_start:
	.incbin "src/export/flamegraph.html"
	.globl flamegraph_html_end
flamegraph_html_end:
	.size flamegraph_html_start, flamegraph_html_end - flamegraph_html_start
	.byte 0

	.section .note.GNU-stack,"",@progbits
