# Decryption of encrypted models (csrc/api/model_crypto.c, docs/encryption.md) through OpenSSL's libcrypto,
# optional: MACE_ENABLE_CRYPTO=AUTO (default) uses it when found (Debian: libssl-dev, or libssl-dev:arm64
# when cross-compiling), ON requires it, OFF leaves it out. Without it the library loads plain models
# only and an encrypted one fails with MACE_UNSUPPORTED. Included by CMakeLists.txt once mace_objects
# and MACE_LINK_LIBS exist; adds libcrypto to MACE_LINK_LIBS.
set(MACE_ENABLE_CRYPTO AUTO CACHE STRING "Decrypt encrypted models with OpenSSL's libcrypto: AUTO, ON, OFF")
set(MACE_HAVE_OPENSSL 0)
set(MACE_PC_CRYPTO "")  # for mace.pc's Libs.private
if(NOT MACE_ENABLE_CRYPTO STREQUAL "OFF")
  find_package(OpenSSL COMPONENTS Crypto QUIET)
  if(OPENSSL_FOUND AND TARGET OpenSSL::Crypto)
    set(MACE_HAVE_OPENSSL 1)
    list(APPEND MACE_LINK_LIBS OpenSSL::Crypto)
    set(MACE_PC_CRYPTO -lcrypto)
    target_link_libraries(mace_objects PRIVATE OpenSSL::Crypto)  # its include path
    message(STATUS "mace: encrypted models: OpenSSL libcrypto ${OPENSSL_VERSION}")
  elseif(MACE_ENABLE_CRYPTO STREQUAL "ON")
    message(FATAL_ERROR "mace: MACE_ENABLE_CRYPTO=ON but OpenSSL's libcrypto was not found "
                        "(apt-get install libssl-dev; libssl-dev:arm64 when cross-compiling)")
  else()
    message(STATUS "mace: encrypted models: not supported (no OpenSSL libcrypto found)")
  endif()
endif()
set_property(SOURCE ${CMAKE_SOURCE_DIR}/csrc/api/model_crypto.c APPEND PROPERTY COMPILE_DEFINITIONS
             MACE_HAVE_OPENSSL=${MACE_HAVE_OPENSSL})
