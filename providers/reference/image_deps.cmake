# Image codecs for the reference provider's ImageDecoder (ref_image_*.c).
# Each comes from a Debian -dev package that tools/setup_debian.sh installs;
# a missing one stops the configure step with the package to install.
find_package(PkgConfig REQUIRED)
set(_tessera_image_codecs
    "TSR_IMG_JPEG|libjpeg|libjpeg62-turbo-dev"
    "TSR_IMG_PNG|libpng|libpng-dev"
    "TSR_IMG_TIFF|libtiff-4>=4.5|libtiff-dev"
    "TSR_IMG_WEBP|libwebp|libwebp-dev"
    "TSR_IMG_OPENJP2|libopenjp2|libopenjp2-7-dev")
foreach(codec ${_tessera_image_codecs})
  string(REPLACE "|" ";" codec "${codec}")
  list(GET codec 0 prefix)
  list(GET codec 1 module)
  list(GET codec 2 debian_package)
  pkg_check_modules(${prefix} QUIET IMPORTED_TARGET ${module})
  if(NOT ${prefix}_FOUND)
    message(FATAL_ERROR
      "The reference provider's ImageDecoder needs ${module} (pkg-config), which was not found. "
      "On Debian: apt-get install ${debian_package} (tools/setup_debian.sh installs it).")
  endif()
  target_link_libraries(tessera_provider_reference PRIVATE PkgConfig::${prefix})
endforeach()
