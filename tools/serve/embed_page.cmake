# Writes the chat page into a header as one raw string literal (kChatPage).
file(READ "${IN}" page)
string(FIND "${page}" ")PAGE\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${IN} contains the literal's end marker )PAGE\"")
endif()
file(WRITE "${OUT}.tmp" "// Generated from tools/serve/web/index.html by embed_page.cmake.\n#pragma once\n\nnamespace serve {\ninline constexpr const char kChatPage[] = R\"PAGE(${page})PAGE\";\n}  // namespace serve\n")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
