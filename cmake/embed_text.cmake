# Writes OUT: the text of IN as `const char* const NAME` in namespace NS.
file(READ ${IN} text)
set(body "// Generated from ${IN} by cmake/embed_text.cmake. Do not edit.\nnamespace ${NS} {\nextern const char* const ${NAME};\nconst char* const ${NAME} = R\"KPORTTEXT(${text})KPORTTEXT\";\n}\n")
file(WRITE ${OUT}.tmp "${body}")
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
