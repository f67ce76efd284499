# Writes OUT: every file under ROOT as an entry {relative path, text} of
# `extern const kport::config::embedded_file NAME[]` (ending with {nullptr,
# nullptr}) in namespace NS. The profiles tree is data the binary carries, so
# `kport init` and the adapters work from any install.
file(GLOB_RECURSE files RELATIVE ${ROOT} ${ROOT}/*)
list(SORT files)
set(body "// Generated from ${ROOT} by cmake/embed_tree.cmake. Do not edit.\n#include \"config/profiles.hpp\"\nnamespace ${NS} {\nextern const embedded_file ${NAME}[];\nconst embedded_file ${NAME}[] = {\n")
foreach(f ${files})
  file(READ ${ROOT}/${f} text)
  string(APPEND body "  {\"${f}\", R\"KPORTTREE(${text})KPORTTREE\"},\n")
endforeach()
string(APPEND body "  {nullptr, nullptr}};\n}\n")
file(WRITE ${OUT}.tmp "${body}")
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUT}.tmp)
