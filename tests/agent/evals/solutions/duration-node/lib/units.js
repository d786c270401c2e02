const SECONDS = {
  s: 1,
  m: 60,
  h: 60 * 60,
};

module.exports = { SECONDS };
