# RegexFullMatch (ref_text_regex.c) matches with PCRE2's 8-bit library.
# Without it the reference provider cannot be built: say which package to add.
find_package(PkgConfig REQUIRED)
pkg_check_modules(TESSERA_PCRE2 IMPORTED_TARGET libpcre2-8)
if(NOT TESSERA_PCRE2_FOUND)
  message(FATAL_ERROR
    "libpcre2-8 not found: the reference provider's RegexFullMatch needs PCRE2. "
    "On Debian: apt-get install libpcre2-dev (tools/setup_debian.sh installs it).")
endif()
target_link_libraries(tessera_provider_reference PRIVATE PkgConfig::TESSERA_PCRE2)
