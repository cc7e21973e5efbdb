/* SPDX-License-Identifier: Apache-2.0 */
/* serve's page, linked into the binary: no files and no network at run time. */
	.section .rodata
	.balign 16
	.globl serve_ui_html_start
	.type serve_ui_html_start, @object
serve_ui_html_start:
	.incbin "src/serve/ui.html"
	.globl serve_ui_html_end
serve_ui_html_end:
	.size serve_ui_html_start, serve_ui_html_end - serve_ui_html_start
	.byte 0

	.section .note.GNU-stack,"",@progbits
